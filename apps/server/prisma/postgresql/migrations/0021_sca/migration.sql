-- AlterTable
ALTER TABLE "ExternalAccount" ADD COLUMN     "scaTrustedAt" TIMESTAMP(3);

-- CreateTable
CREATE TABLE "ScaFactor" (
    "id" TEXT NOT NULL,
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
    "expiresAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ScaFactor_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ScaChallenge" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "subjectId" TEXT NOT NULL,
    "factor" TEXT NOT NULL,
    "webauthnChallenge" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ScaChallenge_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ScaLoginState" (
    "customerId" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "sessionExpiresAt" TIMESTAMP(3),
    "failedAttempts" INTEGER NOT NULL DEFAULT 0,
    "lockedUntil" TIMESTAMP(3),
    "suspended" BOOLEAN NOT NULL DEFAULT false,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ScaLoginState_pkey" PRIMARY KEY ("customerId")
);

-- CreateTable
CREATE TABLE "ScaFactorReset" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "factor" TEXT NOT NULL,
    "livenessAccessToken" TEXT NOT NULL,
    "livenessPassesAt" TIMESTAMP(3) NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "completedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ScaFactorReset_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ScaFactor_platformId_customerId_factor_idx" ON "ScaFactor"("platformId", "customerId", "factor");

-- CreateIndex
CREATE UNIQUE INDEX "ScaChallenge_customerId_purpose_subjectId_key" ON "ScaChallenge"("customerId", "purpose", "subjectId");

-- CreateIndex
CREATE INDEX "ScaFactorReset_platformId_customerId_createdAt_idx" ON "ScaFactorReset"("platformId", "customerId", "createdAt");

