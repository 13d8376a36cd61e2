-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_ExternalAccount" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT,
    "currency" TEXT NOT NULL,
    "accountType" TEXT NOT NULL,
    "accountInfo" TEXT NOT NULL,
    "identifier" TEXT NOT NULL,
    "beneficiaryName" TEXT NOT NULL,
    "beneficiaryVerificationStatus" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'ACTIVE',
    "ownershipType" TEXT,
    "platformAccountId" TEXT,
    "defaultUmaDepositAccount" BOOLEAN NOT NULL DEFAULT false,
    "ownershipChallenge" TEXT,
    "deletedAt" DATETIME,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);
INSERT INTO "new_ExternalAccount" ("accountInfo", "accountType", "beneficiaryName", "beneficiaryVerificationStatus", "createdAt", "currency", "customerId", "id", "identifier", "platformId", "updatedAt") SELECT "accountInfo", "accountType", "beneficiaryName", "beneficiaryVerificationStatus", "createdAt", "currency", "customerId", "id", "identifier", "platformId", "updatedAt" FROM "ExternalAccount";
DROP TABLE "ExternalAccount";
ALTER TABLE "new_ExternalAccount" RENAME TO "ExternalAccount";
CREATE INDEX "ExternalAccount_platformId_createdAt_id_idx" ON "ExternalAccount"("platformId", "createdAt", "id");
CREATE INDEX "ExternalAccount_customerId_idx" ON "ExternalAccount"("customerId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;


-- Earlier accounts in the live contract's shape: accountInfo names its own
-- accountType, bank accounts carry their beneficiary.
UPDATE "ExternalAccount" SET "accountType" = 'USD_ACCOUNT', "accountInfo" = json_object('accountType', 'USD_ACCOUNT', 'accountNumber', json_extract("accountInfo", '$.accountNumber'), 'routingNumber', json_extract("accountInfo", '$.routingNumber'), 'beneficiary', json_object('beneficiaryType', 'INDIVIDUAL', 'fullName', "beneficiaryName")) WHERE "accountType" = 'US_ACCOUNT';
UPDATE "ExternalAccount" SET "accountType" = 'EUR_ACCOUNT', "accountInfo" = json_object('accountType', 'EUR_ACCOUNT', 'iban', json_extract("accountInfo", '$.iban'), 'beneficiary', json_object('beneficiaryType', 'INDIVIDUAL', 'fullName', "beneficiaryName", 'countryOfResidence', substr(json_extract("accountInfo", '$.iban'), 1, 2))) WHERE "accountType" = 'IBAN';
UPDATE "ExternalAccount" SET "accountType" = 'MXN_ACCOUNT', "accountInfo" = json_object('accountType', 'MXN_ACCOUNT', 'clabeNumber', json_extract("accountInfo", '$.clabe'), 'beneficiary', json_object('beneficiaryType', 'INDIVIDUAL', 'fullName', "beneficiaryName")) WHERE "accountType" = 'CLABE';
UPDATE "ExternalAccount" SET "accountInfo" = json_object('accountType', "accountType", 'address', json_extract("accountInfo", '$.address')) WHERE "accountType" IN ('SPARK_WALLET', 'SOLANA_WALLET');
UPDATE "ExternalAccount" SET "accountInfo" = json_object('accountType', 'LIGHTNING', 'lightningAddress', json_extract("accountInfo", '$.address')) WHERE "accountType" = 'LIGHTNING';
-- A UMA address is no external account in the live contract (quotes pay it
-- directly): such accounts are retired.
UPDATE "ExternalAccount" SET "deletedAt" = "updatedAt" WHERE "accountType" = 'UMA';
