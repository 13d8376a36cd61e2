-- DropIndex
DROP INDEX "WebhookEvent_platformId_objectId_idx";

-- AlterTable
ALTER TABLE "WebhookEvent" ADD COLUMN     "firstAttemptAt" TIMESTAMP(3),
ADD COLUMN     "replayCount" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "seq" BIGINT NOT NULL DEFAULT 0;

-- CreateIndex
CREATE INDEX "WebhookEvent_platformId_objectId_seq_idx" ON "WebhookEvent"("platformId", "objectId", "seq");

