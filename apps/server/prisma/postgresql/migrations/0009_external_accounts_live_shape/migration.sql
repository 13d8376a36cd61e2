-- AlterTable
ALTER TABLE "ExternalAccount" ADD COLUMN     "defaultUmaDepositAccount" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "deletedAt" TIMESTAMP(3),
ADD COLUMN     "ownershipChallenge" TEXT,
ADD COLUMN     "ownershipType" TEXT,
ADD COLUMN     "platformAccountId" TEXT,
ADD COLUMN     "status" TEXT NOT NULL DEFAULT 'ACTIVE',
ALTER COLUMN "customerId" DROP NOT NULL;


-- Earlier accounts in the live contract's shape: accountInfo names its own
-- accountType, bank accounts carry their beneficiary.
UPDATE "ExternalAccount" SET "accountType" = 'USD_ACCOUNT', "accountInfo" = jsonb_build_object('accountType', 'USD_ACCOUNT', 'accountNumber', ("accountInfo"::jsonb ->> 'accountNumber'), 'routingNumber', ("accountInfo"::jsonb ->> 'routingNumber'), 'beneficiary', jsonb_build_object('beneficiaryType', 'INDIVIDUAL', 'fullName', "beneficiaryName"))::text WHERE "accountType" = 'US_ACCOUNT';
UPDATE "ExternalAccount" SET "accountType" = 'EUR_ACCOUNT', "accountInfo" = jsonb_build_object('accountType', 'EUR_ACCOUNT', 'iban', ("accountInfo"::jsonb ->> 'iban'), 'beneficiary', jsonb_build_object('beneficiaryType', 'INDIVIDUAL', 'fullName', "beneficiaryName", 'countryOfResidence', substr("accountInfo"::jsonb ->> 'iban', 1, 2)))::text WHERE "accountType" = 'IBAN';
UPDATE "ExternalAccount" SET "accountType" = 'MXN_ACCOUNT', "accountInfo" = jsonb_build_object('accountType', 'MXN_ACCOUNT', 'clabeNumber', ("accountInfo"::jsonb ->> 'clabe'), 'beneficiary', jsonb_build_object('beneficiaryType', 'INDIVIDUAL', 'fullName', "beneficiaryName"))::text WHERE "accountType" = 'CLABE';
UPDATE "ExternalAccount" SET "accountInfo" = jsonb_build_object('accountType', "accountType", 'address', ("accountInfo"::jsonb ->> 'address'))::text WHERE "accountType" IN ('SPARK_WALLET', 'SOLANA_WALLET');
UPDATE "ExternalAccount" SET "accountInfo" = jsonb_build_object('accountType', 'LIGHTNING', 'lightningAddress', ("accountInfo"::jsonb ->> 'address'))::text WHERE "accountType" = 'LIGHTNING';
-- A UMA address is no external account in the live contract (quotes pay it
-- directly): such accounts are retired.
UPDATE "ExternalAccount" SET "deletedAt" = "updatedAt" WHERE "accountType" = 'UMA';
