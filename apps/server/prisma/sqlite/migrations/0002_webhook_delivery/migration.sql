-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_WebhookEvent" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "objectId" TEXT NOT NULL,
    "seq" BIGINT NOT NULL DEFAULT 0,
    "payload" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "status" TEXT NOT NULL,
    "attemptCount" INTEGER NOT NULL DEFAULT 0,
    "replayCount" INTEGER NOT NULL DEFAULT 0,
    "nextAttemptAt" DATETIME NOT NULL,
    "firstAttemptAt" DATETIME,
    "lockedUntil" DATETIME,
    "lockedBy" TEXT,
    "deliveredAt" DATETIME
);
INSERT INTO "new_WebhookEvent" ("attemptCount", "createdAt", "deliveredAt", "id", "lockedBy", "lockedUntil", "nextAttemptAt", "objectId", "payload", "platformId", "status", "type") SELECT "attemptCount", "createdAt", "deliveredAt", "id", "lockedBy", "lockedUntil", "nextAttemptAt", "objectId", "payload", "platformId", "status", "type" FROM "WebhookEvent";
DROP TABLE "WebhookEvent";
ALTER TABLE "new_WebhookEvent" RENAME TO "WebhookEvent";
CREATE INDEX "WebhookEvent_status_nextAttemptAt_idx" ON "WebhookEvent"("status", "nextAttemptAt");
CREATE INDEX "WebhookEvent_platformId_createdAt_id_idx" ON "WebhookEvent"("platformId", "createdAt", "id");
CREATE INDEX "WebhookEvent_platformId_objectId_seq_idx" ON "WebhookEvent"("platformId", "objectId", "seq");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

