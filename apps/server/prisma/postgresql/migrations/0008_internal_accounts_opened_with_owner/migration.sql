-- AlterTable
ALTER TABLE "InternalAccount" ALTER COLUMN "customerId" DROP NOT NULL;


-- The live contract's account types: a custodial account is INTERNAL_FIAT
-- (every sandbox currency so far is fiat).
UPDATE "InternalAccount" SET "type" = 'INTERNAL_FIAT' WHERE "type" = 'STANDARD';
