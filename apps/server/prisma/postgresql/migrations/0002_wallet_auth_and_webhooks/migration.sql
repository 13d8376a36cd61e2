-- DropIndex
DROP INDEX "WebhookEvent_platformId_objectId_idx";

-- AlterTable
ALTER TABLE "InternalAccount" ADD COLUMN     "walletPrivateKey" TEXT;

-- AlterTable
ALTER TABLE "AuthMethod" ADD COLUMN     "otpExpiresAt" TIMESTAMP(3),
ADD COLUMN     "otpTargetPrivateKey" TEXT,
ALTER COLUMN "passkeyCounter" SET DATA TYPE BIGINT;

-- AlterTable
ALTER TABLE "WebhookEvent" ADD COLUMN     "firstAttemptAt" TIMESTAMP(3),
ADD COLUMN     "replayCount" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "seq" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "AuthSession" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "authMethodId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "nickname" TEXT NOT NULL,
    "credentialId" TEXT,
    "publicKey" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "revokedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "AuthSession_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SignedChallenge" (
    "id" TEXT NOT NULL,
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
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "consumedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SignedChallenge_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "RateLimitEvent" (
    "id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "RateLimitEvent_pkey" PRIMARY KEY ("id")
);

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

-- CreateIndex
CREATE INDEX "AuthMethod_platformId_accountId_createdAt_id_idx" ON "AuthMethod"("platformId", "accountId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "WebhookEvent_platformId_objectId_seq_idx" ON "WebhookEvent"("platformId", "objectId", "seq");

