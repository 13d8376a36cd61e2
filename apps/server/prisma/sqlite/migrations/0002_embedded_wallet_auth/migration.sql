-- AlterTable
ALTER TABLE "InternalAccount" ADD COLUMN "walletPrivateKey" TEXT;

-- CreateTable
CREATE TABLE "AuthSession" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "authMethodId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "nickname" TEXT NOT NULL,
    "credentialId" TEXT,
    "publicKey" TEXT NOT NULL,
    "expiresAt" DATETIME NOT NULL,
    "revokedAt" DATETIME,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "SignedChallenge" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "activity" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "bindingDigest" TEXT NOT NULL,
    "signerKind" TEXT NOT NULL,
    "signerPublicKey" TEXT,
    "authMethodId" TEXT,
    "authType" TEXT,
    "data" TEXT,
    "expiresAt" DATETIME NOT NULL,
    "consumedAt" DATETIME,
    "createdAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "RateLimitEvent" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "key" TEXT NOT NULL,
    "at" DATETIME NOT NULL
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_AuthMethod" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "nickname" TEXT NOT NULL,
    "credentialId" TEXT,
    "oauthIssuer" TEXT,
    "oauthAudience" TEXT,
    "oauthSubject" TEXT,
    "passkeyPublicKey" TEXT,
    "passkeyCounter" BIGINT,
    "passkeyTransports" TEXT,
    "otpTargetPrivateKey" TEXT,
    "otpExpiresAt" DATETIME,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);
INSERT INTO "new_AuthMethod" ("accountId", "createdAt", "credentialId", "id", "nickname", "oauthAudience", "oauthIssuer", "oauthSubject", "passkeyCounter", "passkeyPublicKey", "passkeyTransports", "platformId", "type", "updatedAt") SELECT "accountId", "createdAt", "credentialId", "id", "nickname", "oauthAudience", "oauthIssuer", "oauthSubject", "passkeyCounter", "passkeyPublicKey", "passkeyTransports", "platformId", "type", "updatedAt" FROM "AuthMethod";
DROP TABLE "AuthMethod";
ALTER TABLE "new_AuthMethod" RENAME TO "AuthMethod";
CREATE INDEX "AuthMethod_accountId_idx" ON "AuthMethod"("accountId");
CREATE INDEX "AuthMethod_platformId_accountId_createdAt_id_idx" ON "AuthMethod"("platformId", "accountId", "createdAt", "id");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "AuthSession_accountId_publicKey_idx" ON "AuthSession"("accountId", "publicKey");

-- CreateIndex
CREATE INDEX "AuthSession_platformId_accountId_createdAt_id_idx" ON "AuthSession"("platformId", "accountId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "AuthSession_authMethodId_idx" ON "AuthSession"("authMethodId");

-- CreateIndex
CREATE INDEX "SignedChallenge_platformId_createdAt_idx" ON "SignedChallenge"("platformId", "createdAt");

-- CreateIndex
CREATE INDEX "RateLimitEvent_key_at_idx" ON "RateLimitEvent"("key", "at");

