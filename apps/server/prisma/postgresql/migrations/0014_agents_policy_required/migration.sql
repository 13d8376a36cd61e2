-- AlterTable
ALTER TABLE "Agent" DROP COLUMN "approvalRequiredAbove",
DROP COLUMN "maxTransactionAmount",
ALTER COLUMN "name" SET NOT NULL,
ALTER COLUMN "policy" SET NOT NULL,
ALTER COLUMN "deviceCodeExpiresAt" SET NOT NULL;

