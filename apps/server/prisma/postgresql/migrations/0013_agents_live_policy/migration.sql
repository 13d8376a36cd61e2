-- AlterTable
ALTER TABLE "Transaction" ADD COLUMN     "agentUsageAmount" BIGINT,
ADD COLUMN     "agentUsageAt" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "Agent" ADD COLUMN     "deviceCodeExpiresAt" TIMESTAMP(3),
ADD COLUMN     "name" TEXT,
ADD COLUMN     "policy" TEXT;

-- AlterTable
ALTER TABLE "AgentAccessToken" ALTER COLUMN "expiresAt" DROP NOT NULL;

-- CreateIndex
CREATE INDEX "Transaction_agentId_agentUsageAt_idx" ON "Transaction"("agentId", "agentUsageAt");


-- Agents take the live policy shape, keeping what they were allowed: the four
-- permissions of what agents can call, their limit per movement and their
-- approval threshold. The old amounts were minor units of whichever account
-- moved; the policy's currency is the customer's first (USD when the sandbox
-- has no rates for it). A device code expires a day after it was issued.
UPDATE "Agent" SET
  "name" = "Agent"."id",
  "policy" = (
    SELECT json_build_object(
      'permissions', json_build_array('VIEW_TRANSACTIONS', 'CREATE_TRANSFERS', 'CREATE_QUOTES', 'EXECUTE_QUOTES'),
      'defaultExecutionMode', 'AUTO',
      'spendingLimits', json_build_object('currency', "cur", 'perTransactionLimit', "Agent"."maxTransactionAmount"),
      'approvalThresholds', json_build_object('currency', "cur", 'amount', "Agent"."approvalRequiredAbove"))::text
    FROM (SELECT COALESCE((
      SELECT CASE WHEN ("c"."currencies"::json ->> 0) IN ('USD', 'EUR', 'GBP', 'CAD', 'MXN', 'BRL', 'USDB')
        THEN "c"."currencies"::json ->> 0 ELSE 'USD' END
      FROM "Customer" "c" WHERE "c"."id" = "Agent"."customerId"), 'USD') AS "cur") AS "p"),
  "deviceCodeExpiresAt" = "Agent"."createdAt" + interval '1 day';

-- Movements agents started count towards their new daily and monthly limits
-- as they were made (a quote payment once executed).
UPDATE "Transaction" SET "agentUsageAmount" = "amount", "agentUsageAt" = "createdAt"
  WHERE "agentId" IS NOT NULL
    AND ("type" IN ('TRANSFER_IN', 'TRANSFER_OUT')
      OR ("type" = 'QUOTE_PAYMENT' AND "status" NOT IN ('PENDING', 'EXPIRED')));
