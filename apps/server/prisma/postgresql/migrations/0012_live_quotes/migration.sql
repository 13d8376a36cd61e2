-- AlterTable
ALTER TABLE "Transaction" ADD COLUMN     "description" TEXT;

-- AlterTable
ALTER TABLE "Quote" ADD COLUMN     "scaAttempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "scaChallengeId" TEXT,
ADD COLUMN     "scaExpiresAt" TIMESTAMP(3),
ADD COLUMN     "scaFactor" TEXT;


-- Sources and destinations take the live shapes.
UPDATE "Quote" SET "source" = json_build_object('sourceType', 'ACCOUNT', 'accountId', "sourceAccountId")::text
  WHERE "source"::json->>'sourceType' = 'INTERNAL_ACCOUNT';
UPDATE "Quote" SET "destination" = json_build_object('destinationType', 'ACCOUNT', 'accountId', "destinationExternalAccountId")::text
  WHERE "destination"::json->>'destinationType' = 'EXTERNAL_ACCOUNT';

-- Every quote has its transaction: one is made for the quotes never executed.
INSERT INTO "Transaction" ("id", "platformId", "type", "status", "direction", "amount", "currency",
    "internalAccountId", "externalAccountId", "umaAddress", "receivedAmount", "receivedCurrency",
    "exchangeRate", "quoteId", "customerId", "agentId", "stepsApplied", "createdAt", "updatedAt")
  SELECT 'Transaction:' || substr("id", 7), "platformId", 'QUOTE_PAYMENT',
    CASE "status" WHEN 'EXPIRED' THEN 'EXPIRED' ELSE 'PENDING' END, 'DEBIT', "sendingAmount",
    "sendingCurrency", "sourceAccountId", "destinationExternalAccountId",
    "destination"::json->>'umaAddress', "receivingAmount", "receivingCurrency",
    "exchangeRate", "id", "customerId", "agentId", 0, "createdAt", "updatedAt"
  FROM "Quote" WHERE "transactionId" IS NULL;
UPDATE "Quote" SET "transactionId" = 'Transaction:' || substr("id", 7) WHERE "transactionId" IS NULL;
