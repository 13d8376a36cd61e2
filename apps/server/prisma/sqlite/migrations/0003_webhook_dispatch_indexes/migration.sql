-- DropIndex
DROP INDEX "WebhookEvent_status_nextAttemptAt_idx";

-- DropIndex
DROP INDEX "WebhookEvent_platformId_objectId_seq_idx";

-- CreateIndex
CREATE INDEX "WebhookEvent_platformId_status_nextAttemptAt_idx" ON "WebhookEvent"("platformId", "status", "nextAttemptAt");

-- CreateIndex
CREATE INDEX "WebhookEvent_platformId_objectId_status_seq_idx" ON "WebhookEvent"("platformId", "objectId", "status", "seq");

