-- CreateTable
CREATE TABLE "Card" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "cardholderId" TEXT NOT NULL,
    "platformCardId" TEXT,
    "state" TEXT NOT NULL,
    "stateReason" TEXT,
    "brand" TEXT NOT NULL,
    "form" TEXT NOT NULL,
    "last4" TEXT NOT NULL,
    "expMonth" INTEGER NOT NULL,
    "expYear" INTEGER NOT NULL,
    "fundingSources" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "processorRef" TEXT NOT NULL,
    "issuerRef" TEXT NOT NULL,
    "pendingIssuance" TEXT,
    "version" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "CardTransaction" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "cardId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "fundingSourceId" TEXT,
    "status" TEXT NOT NULL,
    "declineReason" TEXT,
    "merchantDescriptor" TEXT NOT NULL,
    "merchantMcc" TEXT NOT NULL,
    "merchantCountry" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "authorizedAmount" BIGINT NOT NULL,
    "heldAmount" BIGINT NOT NULL,
    "settledAmount" BIGINT NOT NULL,
    "refundedAmount" BIGINT NOT NULL,
    "pullCount" INTEGER NOT NULL,
    "pullTotal" BIGINT NOT NULL,
    "pullPending" INTEGER NOT NULL,
    "settlementCount" INTEGER NOT NULL,
    "settlementTotal" BIGINT NOT NULL,
    "refundCount" INTEGER NOT NULL,
    "refundTotal" BIGINT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 0,
    "authorizedAt" DATETIME NOT NULL,
    "lastEventAt" DATETIME NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "CardTransactionEvent" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "cardTransactionId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "status" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "CardRevealToken" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "cardId" TEXT NOT NULL,
    "expiresAt" DATETIME NOT NULL,
    "usedAt" DATETIME,
    "createdAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "Card_platformId_createdAt_id_idx" ON "Card"("platformId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Card_cardholderId_idx" ON "Card"("cardholderId");

-- CreateIndex
CREATE INDEX "CardTransaction_platformId_createdAt_id_idx" ON "CardTransaction"("platformId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "CardTransaction_cardId_createdAt_id_idx" ON "CardTransaction"("cardId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "CardTransactionEvent_cardTransactionId_createdAt_idx" ON "CardTransactionEvent"("cardTransactionId", "createdAt");

-- CreateIndex
CREATE INDEX "CardRevealToken_cardId_idx" ON "CardRevealToken"("cardId");

