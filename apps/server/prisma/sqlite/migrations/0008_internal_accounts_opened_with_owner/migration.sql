-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_InternalAccount" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT,
    "type" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "balance" BIGINT NOT NULL DEFAULT 0,
    "status" TEXT NOT NULL,
    "privacyEnabled" BOOLEAN NOT NULL DEFAULT false,
    "walletPrivateKey" TEXT,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);
INSERT INTO "new_InternalAccount" ("balance", "createdAt", "currency", "customerId", "id", "platformId", "privacyEnabled", "status", "type", "updatedAt", "walletPrivateKey") SELECT "balance", "createdAt", "currency", "customerId", "id", "platformId", "privacyEnabled", "status", "type", "updatedAt", "walletPrivateKey" FROM "InternalAccount";
DROP TABLE "InternalAccount";
ALTER TABLE "new_InternalAccount" RENAME TO "InternalAccount";
CREATE INDEX "InternalAccount_platformId_createdAt_id_idx" ON "InternalAccount"("platformId", "createdAt", "id");
CREATE INDEX "InternalAccount_customerId_idx" ON "InternalAccount"("customerId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;


-- The live contract's account types: a custodial account is INTERNAL_FIAT
-- (every sandbox currency so far is fiat).
UPDATE "InternalAccount" SET "type" = 'INTERNAL_FIAT' WHERE "type" = 'STANDARD';
