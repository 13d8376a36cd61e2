-- AlterTable
ALTER TABLE "Transaction" ADD COLUMN "description" TEXT;

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Quote" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT,
    "agentId" TEXT,
    "status" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "destination" TEXT NOT NULL,
    "sourceAccountId" TEXT,
    "destinationExternalAccountId" TEXT,
    "receiverAccountId" TEXT,
    "sendingCurrency" TEXT NOT NULL,
    "receivingCurrency" TEXT NOT NULL,
    "sendingAmount" BIGINT NOT NULL,
    "receivingAmount" BIGINT NOT NULL,
    "exchangeRate" TEXT NOT NULL,
    "feeAmount" BIGINT NOT NULL,
    "paymentReference" TEXT,
    "expiresAt" DATETIME NOT NULL,
    "transactionId" TEXT,
    "scaChallengeId" TEXT,
    "scaFactor" TEXT,
    "scaExpiresAt" DATETIME,
    "scaAttempts" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);
INSERT INTO "new_Quote" ("agentId", "createdAt", "customerId", "destination", "destinationExternalAccountId", "exchangeRate", "expiresAt", "feeAmount", "id", "paymentReference", "platformId", "receiverAccountId", "receivingAmount", "receivingCurrency", "sendingAmount", "sendingCurrency", "source", "sourceAccountId", "status", "transactionId", "updatedAt") SELECT "agentId", "createdAt", "customerId", "destination", "destinationExternalAccountId", "exchangeRate", "expiresAt", "feeAmount", "id", "paymentReference", "platformId", "receiverAccountId", "receivingAmount", "receivingCurrency", "sendingAmount", "sendingCurrency", "source", "sourceAccountId", "status", "transactionId", "updatedAt" FROM "Quote";
DROP TABLE "Quote";
ALTER TABLE "new_Quote" RENAME TO "Quote";
CREATE INDEX "Quote_platformId_createdAt_id_idx" ON "Quote"("platformId", "createdAt", "id");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;


-- Sources and destinations take the live shapes.
UPDATE "Quote" SET "source" = json_object('sourceType', 'ACCOUNT', 'accountId', "sourceAccountId")
  WHERE json_extract("source", '$.sourceType') = 'INTERNAL_ACCOUNT';
UPDATE "Quote" SET "destination" = json_object('destinationType', 'ACCOUNT', 'accountId', "destinationExternalAccountId")
  WHERE json_extract("destination", '$.destinationType') = 'EXTERNAL_ACCOUNT';

-- Every quote has its transaction: one is made for the quotes never executed.
INSERT INTO "Transaction" ("id", "platformId", "type", "status", "direction", "amount", "currency",
    "internalAccountId", "externalAccountId", "umaAddress", "receivedAmount", "receivedCurrency",
    "exchangeRate", "quoteId", "customerId", "agentId", "stepsApplied", "createdAt", "updatedAt")
  SELECT 'Transaction:' || substr("id", 7), "platformId", 'QUOTE_PAYMENT',
    CASE "status" WHEN 'EXPIRED' THEN 'EXPIRED' ELSE 'PENDING' END, 'DEBIT', "sendingAmount",
    "sendingCurrency", "sourceAccountId", "destinationExternalAccountId",
    json_extract("destination", '$.umaAddress'), "receivingAmount", "receivingCurrency",
    "exchangeRate", "id", "customerId", "agentId", 0, "createdAt", "updatedAt"
  FROM "Quote" WHERE "transactionId" IS NULL;
UPDATE "Quote" SET "transactionId" = 'Transaction:' || substr("id", 7) WHERE "transactionId" IS NULL;
