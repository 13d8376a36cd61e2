-- CreateTable
CREATE TABLE "AgentAction" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "transactionId" TEXT NOT NULL,
    "quoteId" TEXT,
    "amount" BIGINT,
    "currency" TEXT,
    "sourceAccountId" TEXT,
    "destinationAccountId" TEXT,
    "rejectionReason" TEXT,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Agent" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "policy" TEXT NOT NULL,
    "deviceCodeHash" TEXT NOT NULL,
    "deviceCodeExpiresAt" DATETIME NOT NULL,
    "deviceCodeRedeemedAt" DATETIME,
    "isPaused" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);
INSERT INTO "new_Agent" ("createdAt", "customerId", "deviceCodeExpiresAt", "deviceCodeHash", "deviceCodeRedeemedAt", "id", "name", "platformId", "policy", "updatedAt") SELECT "createdAt", "customerId", "deviceCodeExpiresAt", "deviceCodeHash", "deviceCodeRedeemedAt", "id", "name", "platformId", "policy", "updatedAt" FROM "Agent";
DROP TABLE "Agent";
ALTER TABLE "new_Agent" RENAME TO "Agent";
CREATE UNIQUE INDEX "Agent_deviceCodeHash_key" ON "Agent"("deviceCodeHash");
CREATE INDEX "Agent_platformId_customerId_idx" ON "Agent"("platformId", "customerId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE UNIQUE INDEX "AgentAction_transactionId_key" ON "AgentAction"("transactionId");

-- CreateIndex
CREATE INDEX "AgentAction_platformId_agentId_createdAt_idx" ON "AgentAction"("platformId", "agentId", "createdAt");

-- CreateIndex
CREATE INDEX "AgentAction_platformId_status_createdAt_idx" ON "AgentAction"("platformId", "status", "createdAt");

