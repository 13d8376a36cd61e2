-- DropIndex
DROP INDEX "WebhookEvent_platformId_objectId_idx";

-- AlterTable
ALTER TABLE "InternalAccount" ADD COLUMN     "walletPrivateKey" TEXT;

-- AlterTable
ALTER TABLE "AuthMethod" ADD COLUMN     "otpExpiresAt" TIMESTAMP(3),
ADD COLUMN     "otpTargetPrivateKey" TEXT,
ALTER COLUMN "passkeyCounter" SET DATA TYPE BIGINT;

-- AlterTable
ALTER TABLE "WebhookEvent" ADD COLUMN     "firstAttemptAt" TIMESTAMP(3),
ADD COLUMN     "replayCount" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "seq" BIGINT NOT NULL DEFAULT 0;

-- CreateTable
CREATE TABLE "AuthSession" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "authMethodId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "nickname" TEXT NOT NULL,
    "credentialId" TEXT,
    "publicKey" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "revokedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "AuthSession_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SignedChallenge" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "activity" TEXT NOT NULL,
    "payload" TEXT NOT NULL,
    "bindingDigest" TEXT NOT NULL,
    "signerKind" TEXT NOT NULL,
    "signerPublicKey" TEXT,
    "authMethodId" TEXT,
    "authType" TEXT,
    "data" TEXT,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "consumedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "SignedChallenge_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "RateLimitEvent" (
    "id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "RateLimitEvent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ExternalAccount" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "accountType" TEXT NOT NULL,
    "accountInfo" TEXT NOT NULL,
    "identifier" TEXT NOT NULL,
    "beneficiaryName" TEXT NOT NULL,
    "beneficiaryVerificationStatus" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ExternalAccount_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Transaction" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "failureReason" TEXT,
    "internalAccountId" TEXT,
    "externalAccountId" TEXT,
    "quoteId" TEXT,
    "customerId" TEXT,
    "agentId" TEXT,
    "amount" BIGINT NOT NULL,
    "currency" TEXT NOT NULL,
    "direction" TEXT NOT NULL,
    "stepsApplied" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "completedAt" TIMESTAMP(3),

    CONSTRAINT "Transaction_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Quote" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT,
    "agentId" TEXT,
    "status" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "destination" TEXT NOT NULL,
    "sourceAccountId" TEXT,
    "destinationExternalAccountId" TEXT,
    "receiverAccountId" TEXT,
    "sendingCurrency" TEXT NOT NULL,
    "receivingCurrency" TEXT NOT NULL,
    "sendingAmount" BIGINT NOT NULL,
    "receivingAmount" BIGINT NOT NULL,
    "exchangeRate" TEXT NOT NULL,
    "feeAmount" BIGINT NOT NULL,
    "paymentReference" TEXT,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "transactionId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Quote_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Verification" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "kybStatus" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Verification_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Agent" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "maxTransactionAmount" BIGINT NOT NULL,
    "approvalRequiredAbove" BIGINT NOT NULL,
    "deviceCodeHash" TEXT NOT NULL,
    "deviceCodeRedeemedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Agent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AgentAccessToken" (
    "tokenHash" TEXT NOT NULL,
    "agentId" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "AgentAccessToken_pkey" PRIMARY KEY ("tokenHash")
);

-- CreateTable
CREATE TABLE "IdempotencyRecord" (
    "platformId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "requestHash" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "responseStatus" INTEGER,
    "responseBody" TEXT,
    "lockedUntil" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "IdempotencyRecord_pkey" PRIMARY KEY ("platformId","key")
);

-- CreateTable
CREATE TABLE "Card" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "cardholderId" TEXT NOT NULL,
    "platformCardId" TEXT,
    "state" TEXT NOT NULL,
    "stateReason" TEXT,
    "brand" TEXT NOT NULL,
    "form" TEXT NOT NULL,
    "last4" TEXT NOT NULL,
    "expMonth" INTEGER NOT NULL,
    "expYear" INTEGER NOT NULL,
    "fundingSources" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "processorRef" TEXT NOT NULL,
    "issuerRef" TEXT NOT NULL,
    "pendingIssuance" TEXT,
    "version" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Card_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CardTransaction" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "cardId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "fundingSourceId" TEXT,
    "status" TEXT NOT NULL,
    "declineReason" TEXT,
    "merchantDescriptor" TEXT NOT NULL,
    "merchantMcc" TEXT NOT NULL,
    "merchantCountry" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "authorizedAmount" BIGINT NOT NULL,
    "heldAmount" BIGINT NOT NULL,
    "settledAmount" BIGINT NOT NULL,
    "refundedAmount" BIGINT NOT NULL,
    "pullCount" INTEGER NOT NULL,
    "pullTotal" BIGINT NOT NULL,
    "pullPending" INTEGER NOT NULL,
    "settlementCount" INTEGER NOT NULL,
    "settlementTotal" BIGINT NOT NULL,
    "refundCount" INTEGER NOT NULL,
    "refundTotal" BIGINT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 0,
    "authorizedAt" TIMESTAMP(3) NOT NULL,
    "lastEventAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CardTransaction_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CardTransactionEvent" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "cardTransactionId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "amount" BIGINT NOT NULL,
    "status" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CardTransactionEvent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CardRevealToken" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "cardId" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "usedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "CardRevealToken_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "AuthSession_accountId_publicKey_idx" ON "AuthSession"("accountId", "publicKey");

-- CreateIndex
CREATE INDEX "AuthSession_platformId_accountId_createdAt_id_idx" ON "AuthSession"("platformId", "accountId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "AuthSession_authMethodId_idx" ON "AuthSession"("authMethodId");

-- CreateIndex
CREATE INDEX "SignedChallenge_platformId_createdAt_idx" ON "SignedChallenge"("platformId", "createdAt");

-- CreateIndex
CREATE INDEX "RateLimitEvent_key_at_idx" ON "RateLimitEvent"("key", "at");

-- CreateIndex
CREATE INDEX "ExternalAccount_platformId_createdAt_id_idx" ON "ExternalAccount"("platformId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "ExternalAccount_customerId_idx" ON "ExternalAccount"("customerId");

-- CreateIndex
CREATE INDEX "Transaction_platformId_createdAt_id_idx" ON "Transaction"("platformId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Transaction_internalAccountId_idx" ON "Transaction"("internalAccountId");

-- CreateIndex
CREATE INDEX "Transaction_customerId_idx" ON "Transaction"("customerId");

-- CreateIndex
CREATE INDEX "Transaction_quoteId_idx" ON "Transaction"("quoteId");

-- CreateIndex
CREATE INDEX "Quote_platformId_createdAt_id_idx" ON "Quote"("platformId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Verification_customerId_idx" ON "Verification"("customerId");

-- CreateIndex
CREATE UNIQUE INDEX "Agent_deviceCodeHash_key" ON "Agent"("deviceCodeHash");

-- CreateIndex
CREATE INDEX "Agent_platformId_customerId_idx" ON "Agent"("platformId", "customerId");

-- CreateIndex
CREATE INDEX "AgentAccessToken_agentId_idx" ON "AgentAccessToken"("agentId");

-- CreateIndex
CREATE INDEX "IdempotencyRecord_expiresAt_idx" ON "IdempotencyRecord"("expiresAt");

-- CreateIndex
CREATE INDEX "Card_platformId_createdAt_id_idx" ON "Card"("platformId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Card_cardholderId_idx" ON "Card"("cardholderId");

-- CreateIndex
CREATE INDEX "CardTransaction_platformId_createdAt_id_idx" ON "CardTransaction"("platformId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "CardTransaction_cardId_createdAt_id_idx" ON "CardTransaction"("cardId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "CardTransactionEvent_cardTransactionId_createdAt_idx" ON "CardTransactionEvent"("cardTransactionId", "createdAt");

-- CreateIndex
CREATE INDEX "CardRevealToken_cardId_idx" ON "CardRevealToken"("cardId");

-- CreateIndex
CREATE INDEX "AuthMethod_platformId_accountId_createdAt_id_idx" ON "AuthMethod"("platformId", "accountId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "WebhookEvent_platformId_objectId_seq_idx" ON "WebhookEvent"("platformId", "objectId", "seq");

