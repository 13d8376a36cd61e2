-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_CardTransaction" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "cardId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "platformCustomerId" TEXT,
    "fundingSourceId" TEXT,
    "status" TEXT NOT NULL,
    "declineReason" TEXT,
    "merchantDescriptor" TEXT NOT NULL,
    "merchantMcc" TEXT,
    "merchantCountry" TEXT,
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
    "updatedAt" DATETIME NOT NULL,
    "direction" TEXT NOT NULL DEFAULT 'DEBIT'
);
INSERT INTO "new_CardTransaction" ("authorizedAmount", "authorizedAt", "cardId", "createdAt", "currency", "customerId", "declineReason", "fundingSourceId", "heldAmount", "id", "lastEventAt", "merchantCountry", "merchantDescriptor", "merchantMcc", "platformCustomerId", "platformId", "pullCount", "pullPending", "pullTotal", "refundCount", "refundTotal", "refundedAmount", "settledAmount", "settlementCount", "settlementTotal", "status", "updatedAt", "version") SELECT "authorizedAmount", "authorizedAt", "cardId", "createdAt", "currency", "customerId", "declineReason", "fundingSourceId", "heldAmount", "id", "lastEventAt", "merchantCountry", "merchantDescriptor", "merchantMcc", "platformCustomerId", "platformId", "pullCount", "pullPending", "pullTotal", "refundCount", "refundTotal", "refundedAmount", "settledAmount", "settlementCount", "settlementTotal", "status", "updatedAt", "version" FROM "CardTransaction";
DROP TABLE "CardTransaction";
ALTER TABLE "new_CardTransaction" RENAME TO "CardTransaction";
CREATE INDEX "CardTransaction_platformId_createdAt_id_idx" ON "CardTransaction"("platformId", "createdAt", "id");
CREATE INDEX "CardTransaction_cardId_createdAt_id_idx" ON "CardTransaction"("cardId", "createdAt", "id");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

