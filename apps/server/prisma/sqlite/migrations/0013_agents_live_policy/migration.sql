-- AlterTable
ALTER TABLE "Transaction" ADD COLUMN "agentUsageAmount" BIGINT;
ALTER TABLE "Transaction" ADD COLUMN "agentUsageAt" DATETIME;

-- AlterTable
ALTER TABLE "Agent" ADD COLUMN "deviceCodeExpiresAt" DATETIME;
ALTER TABLE "Agent" ADD COLUMN "name" TEXT;
ALTER TABLE "Agent" ADD COLUMN "policy" TEXT;

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_AgentAccessToken" (
    "tokenHash" TEXT NOT NULL PRIMARY KEY,
    "agentId" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "expiresAt" DATETIME,
    "createdAt" DATETIME NOT NULL
);
INSERT INTO "new_AgentAccessToken" ("agentId", "createdAt", "expiresAt", "platformId", "tokenHash") SELECT "agentId", "createdAt", "expiresAt", "platformId", "tokenHash" FROM "AgentAccessToken";
DROP TABLE "AgentAccessToken";
ALTER TABLE "new_AgentAccessToken" RENAME TO "AgentAccessToken";
CREATE INDEX "AgentAccessToken_agentId_idx" ON "AgentAccessToken"("agentId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "Transaction_agentId_agentUsageAt_idx" ON "Transaction"("agentId", "agentUsageAt");


-- Agents take the live policy shape, keeping what they were allowed: the four
-- permissions of what agents can call, their limit per movement and their
-- approval threshold. The old amounts were minor units of whichever account
-- moved; the policy's currency is the customer's first (USD when the sandbox
-- has no rates for it). A device code expires a day after it was issued.
UPDATE "Agent" SET
  "name" = "id",
  "policy" = (
    SELECT json_object(
      'permissions', json_array('VIEW_TRANSACTIONS', 'CREATE_TRANSFERS', 'CREATE_QUOTES', 'EXECUTE_QUOTES'),
      'defaultExecutionMode', 'AUTO',
      'spendingLimits', json_object('currency', "cur", 'perTransactionLimit', "Agent"."maxTransactionAmount"),
      'approvalThresholds', json_object('currency', "cur", 'amount', "Agent"."approvalRequiredAbove"))
    FROM (SELECT COALESCE((
      SELECT CASE WHEN json_extract("c"."currencies", '$[0]') IN ('USD', 'EUR', 'GBP', 'CAD', 'MXN', 'BRL', 'USDB')
        THEN json_extract("c"."currencies", '$[0]') ELSE 'USD' END
      FROM "Customer" "c" WHERE "c"."id" = "Agent"."customerId"), 'USD') AS "cur")),
  "deviceCodeExpiresAt" = strftime('%Y-%m-%dT%H:%M:%f+00:00', "createdAt", '+1 day');

-- Movements agents started count towards their new daily and monthly limits
-- as they were made (a quote payment once executed).
UPDATE "Transaction" SET "agentUsageAmount" = "amount", "agentUsageAt" = "createdAt"
  WHERE "agentId" IS NOT NULL
    AND ("type" IN ('TRANSFER_IN', 'TRANSFER_OUT')
      OR ("type" = 'QUOTE_PAYMENT' AND "status" NOT IN ('PENDING', 'EXPIRED')));
