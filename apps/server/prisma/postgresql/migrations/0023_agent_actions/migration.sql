-- AlterTable
ALTER TABLE "Agent" ADD COLUMN     "isPaused" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "AgentAction" (
    "id" TEXT NOT NULL,
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
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "AgentAction_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "AgentAction_transactionId_key" ON "AgentAction"("transactionId");

-- CreateIndex
CREATE INDEX "AgentAction_platformId_agentId_createdAt_idx" ON "AgentAction"("platformId", "agentId", "createdAt");

-- CreateIndex
CREATE INDEX "AgentAction_platformId_status_createdAt_idx" ON "AgentAction"("platformId", "status", "createdAt");

