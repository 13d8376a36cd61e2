-- AlterTable
ALTER TABLE "Transaction" ADD COLUMN "exchangeRate" TEXT;
ALTER TABLE "Transaction" ADD COLUMN "receiptDeliveryConfirmedAt" DATETIME;
ALTER TABLE "Transaction" ADD COLUMN "receivedAmount" BIGINT;
ALTER TABLE "Transaction" ADD COLUMN "receivedCurrency" TEXT;
ALTER TABLE "Transaction" ADD COLUMN "reference" TEXT;
ALTER TABLE "Transaction" ADD COLUMN "refundReason" TEXT;
ALTER TABLE "Transaction" ADD COLUMN "refundStatus" TEXT;
ALTER TABLE "Transaction" ADD COLUMN "refundedAt" DATETIME;
ALTER TABLE "Transaction" ADD COLUMN "umaAddress" TEXT;

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
    "updatedAt" DATETIME NOT NULL
);
INSERT INTO "new_CardTransaction" ("authorizedAmount", "authorizedAt", "cardId", "createdAt", "currency", "customerId", "declineReason", "fundingSourceId", "heldAmount", "id", "lastEventAt", "merchantCountry", "merchantDescriptor", "merchantMcc", "platformId", "pullCount", "pullPending", "pullTotal", "refundCount", "refundTotal", "refundedAmount", "settledAmount", "settlementCount", "settlementTotal", "status", "updatedAt", "version") SELECT "authorizedAmount", "authorizedAt", "cardId", "createdAt", "currency", "customerId", "declineReason", "fundingSourceId", "heldAmount", "id", "lastEventAt", "merchantCountry", "merchantDescriptor", "merchantMcc", "platformId", "pullCount", "pullPending", "pullTotal", "refundCount", "refundTotal", "refundedAmount", "settledAmount", "settlementCount", "settlementTotal", "status", "updatedAt", "version" FROM "CardTransaction";
DROP TABLE "CardTransaction";
ALTER TABLE "new_CardTransaction" RENAME TO "CardTransaction";
CREATE INDEX "CardTransaction_platformId_createdAt_id_idx" ON "CardTransaction"("platformId", "createdAt", "id");
CREATE INDEX "CardTransaction_cardId_createdAt_id_idx" ON "CardTransaction"("cardId", "createdAt", "id");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;


-- Statuses and failure reasons take the live contract's values.
UPDATE "Transaction" SET "status" = 'PENDING_AUTHORIZATION' WHERE "status" = 'AWAITING_APPROVAL';
UPDATE "Transaction" SET "failureReason" = 'COLLECTION_FAILED'
  WHERE "type" = 'TRANSFER_IN' AND "failureReason" IS NOT NULL;
UPDATE "Transaction" SET "failureReason" = CASE "failureReason"
    WHEN 'INSUFFICIENT_FUNDS' THEN 'LIMIT_EXCEEDED'
    WHEN 'ACCOUNT_CLOSED' THEN 'ACCOUNT_INVALID'
    WHEN 'BANK_REJECTED' THEN 'ACCOUNT_CANNOT_RECEIVE'
    ELSE 'COUNTERPARTY_POST_TX_FAILED' END
  WHERE "type" = 'TRANSFER_OUT' AND "failureReason" IS NOT NULL;
UPDATE "Transaction" SET "refundStatus" = 'COMPLETED', "refundReason" = 'USER_CANCELLATION',
    "refundedAt" = "updatedAt", "failureReason" = NULL
  WHERE "failureReason" = 'USER_CANCELLED';
UPDATE "Transaction" SET "refundStatus" = 'FAILED', "refundReason" = 'TRANSACTION_FAILED',
    "refundedAt" = "updatedAt", "failureReason" = 'COUNTERPARTY_POST_TX_FAILED'
  WHERE "failureReason" = 'PAYOUT_AND_REFUND_FAILED';
UPDATE "Transaction" SET "refundStatus" = 'COMPLETED', "refundReason" = 'TRANSACTION_FAILED',
    "refundedAt" = "updatedAt"
  WHERE "type" IN ('TRANSFER_OUT', 'QUOTE_PAYMENT') AND "status" = 'FAILED' AND "refundStatus" IS NULL
    AND "internalAccountId" IS NOT NULL;

-- Card transactions carry their cardholder's platformCustomerId.
UPDATE "CardTransaction" SET "platformCustomerId" = (
  SELECT "platformCustomerId" FROM "Customer" WHERE "Customer"."id" = "CardTransaction"."customerId");
-- A declined authorization names the account the card draws on.
UPDATE "CardTransaction" SET "fundingSourceId" = (
  SELECT json_extract("fundingSources", '$[0]') FROM "Card" WHERE "Card"."id" = "CardTransaction"."cardId")
WHERE "fundingSourceId" IS NULL;
