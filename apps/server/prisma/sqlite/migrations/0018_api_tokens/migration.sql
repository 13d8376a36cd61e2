-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_ApiToken" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "permissions" TEXT NOT NULL,
    "secretSalt" TEXT NOT NULL,
    "secretHash" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);
-- Tokens made before tokens had names and permissions (each platform's
-- start-up token) carry over with every permission, as they had in effect.
INSERT INTO "new_ApiToken" ("createdAt", "id", "platformId", "secretHash", "secretSalt", "name", "permissions", "updatedAt") SELECT "createdAt", "id", "platformId", "secretHash", "secretSalt", 'Sandbox token', '["VIEW","TRANSACT","MANAGE"]', "createdAt" FROM "ApiToken";
DROP TABLE "ApiToken";
ALTER TABLE "new_ApiToken" RENAME TO "ApiToken";
CREATE INDEX "ApiToken_platformId_createdAt_id_idx" ON "ApiToken"("platformId", "createdAt", "id");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

