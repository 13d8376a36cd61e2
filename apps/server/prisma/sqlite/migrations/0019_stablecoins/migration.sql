-- CreateTable
CREATE TABLE "StablecoinProviderAccount" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "providerAccountId" TEXT NOT NULL,
    "providerEnvironment" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "apiClientId" TEXT NOT NULL,
    "apiClientSecretSha256" TEXT NOT NULL,
    "lastVerifiedAt" DATETIME,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "Stablecoin" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "symbol" TEXT NOT NULL,
    "baseCurrency" TEXT NOT NULL,
    "network" TEXT NOT NULL,
    "decimals" INTEGER NOT NULL,
    "issuanceStatus" TEXT NOT NULL,
    "gridOperationsStatus" TEXT NOT NULL,
    "networkTokenIdentifier" TEXT NOT NULL,
    "currency" TEXT,
    "provider" TEXT NOT NULL,
    "stablecoinProviderAccountId" TEXT NOT NULL,
    "providerEnvironment" TEXT NOT NULL,
    "providerTokenIdentifier" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "StablecoinOperation" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "stablecoinId" TEXT NOT NULL,
    "operationType" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "fiatAmount" BIGINT NOT NULL,
    "provider" TEXT NOT NULL,
    "providerEnvironment" TEXT NOT NULL,
    "stablecoinProviderAccountId" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "destination" TEXT NOT NULL,
    "fundingInstructions" TEXT,
    "estimatedDelivery" TEXT,
    "outcome" TEXT NOT NULL,
    "debitedAccountId" TEXT,
    "debitedAmount" BIGINT,
    "creditAccountId" TEXT,
    "expiresAt" DATETIME,
    "failureReason" TEXT,
    "description" TEXT,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "StablecoinProviderAccount_platformId_createdAt_id_idx" ON "StablecoinProviderAccount"("platformId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "StablecoinProviderAccount_platformId_provider_providerAccountId_key" ON "StablecoinProviderAccount"("platformId", "provider", "providerAccountId");

-- CreateIndex
CREATE INDEX "Stablecoin_platformId_createdAt_id_idx" ON "Stablecoin"("platformId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "Stablecoin_platformId_provider_providerTokenIdentifier_key" ON "Stablecoin"("platformId", "provider", "providerTokenIdentifier");

-- CreateIndex
CREATE INDEX "StablecoinOperation_platformId_stablecoinId_createdAt_id_idx" ON "StablecoinOperation"("platformId", "stablecoinId", "createdAt", "id");

