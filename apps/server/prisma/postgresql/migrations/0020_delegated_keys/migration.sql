-- CreateTable
CREATE TABLE "DelegatedKey" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "cardId" TEXT NOT NULL,
    "fundingSourceId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "publicKey" TEXT NOT NULL,
    "privateKey" TEXT NOT NULL,
    "nickname" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "activeFundingSourceId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "DelegatedKey_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "DelegatedKey_activeFundingSourceId_key" ON "DelegatedKey"("activeFundingSourceId");

-- CreateIndex
CREATE INDEX "DelegatedKey_platformId_accountId_createdAt_idx" ON "DelegatedKey"("platformId", "accountId", "createdAt");

-- CreateIndex
CREATE INDEX "DelegatedKey_platformId_fundingSourceId_createdAt_idx" ON "DelegatedKey"("platformId", "fundingSourceId", "createdAt");

