-- AlterTable
ALTER TABLE "Transaction" ADD COLUMN     "exchangeRate" TEXT,
ADD COLUMN     "receiptDeliveryConfirmedAt" TIMESTAMP(3),
ADD COLUMN     "receivedAmount" BIGINT,
ADD COLUMN     "receivedCurrency" TEXT,
ADD COLUMN     "reference" TEXT,
ADD COLUMN     "refundReason" TEXT,
ADD COLUMN     "refundStatus" TEXT,
ADD COLUMN     "refundedAt" TIMESTAMP(3),
ADD COLUMN     "umaAddress" TEXT;

-- AlterTable
ALTER TABLE "CardTransaction" ADD COLUMN     "platformCustomerId" TEXT,
ALTER COLUMN "merchantMcc" DROP NOT NULL,
ALTER COLUMN "merchantCountry" DROP NOT NULL;


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
  SELECT "fundingSources"::json->>0 FROM "Card" WHERE "Card"."id" = "CardTransaction"."cardId")
WHERE "fundingSourceId" IS NULL;
