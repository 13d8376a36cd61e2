-- DropIndex
DROP INDEX "WebhookEvent_platformId_status_nextAttemptAt_idx";

-- CreateIndex
CREATE INDEX "WebhookEvent_status_nextAttemptAt_platformId_idx" ON "WebhookEvent"("status", "nextAttemptAt", "platformId");

