-- AlterTable
ALTER TABLE "ExternalAccount" ADD COLUMN "scaTrustedAt" DATETIME;

-- CreateTable
CREATE TABLE "ScaFactor" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "factor" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "secret" TEXT,
    "credentialId" TEXT,
    "publicKey" TEXT,
    "counter" INTEGER NOT NULL DEFAULT 0,
    "transports" TEXT,
    "name" TEXT,
    "webauthnChallenge" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "expiresAt" DATETIME,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "ScaChallenge" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "subjectId" TEXT NOT NULL,
    "factor" TEXT NOT NULL,
    "webauthnChallenge" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "expiresAt" DATETIME NOT NULL,
    "createdAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "ScaLoginState" (
    "customerId" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "sessionExpiresAt" DATETIME,
    "failedAttempts" INTEGER NOT NULL DEFAULT 0,
    "lockedUntil" DATETIME,
    "suspended" BOOLEAN NOT NULL DEFAULT false,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "ScaFactorReset" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "factor" TEXT NOT NULL,
    "livenessAccessToken" TEXT NOT NULL,
    "livenessPassesAt" DATETIME NOT NULL,
    "expiresAt" DATETIME NOT NULL,
    "completedAt" DATETIME,
    "createdAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "ScaFactor_platformId_customerId_factor_idx" ON "ScaFactor"("platformId", "customerId", "factor");

-- CreateIndex
CREATE UNIQUE INDEX "ScaChallenge_customerId_purpose_subjectId_key" ON "ScaChallenge"("customerId", "purpose", "subjectId");

-- CreateIndex
CREATE INDEX "ScaFactorReset_platformId_customerId_createdAt_idx" ON "ScaFactorReset"("platformId", "customerId", "createdAt");

