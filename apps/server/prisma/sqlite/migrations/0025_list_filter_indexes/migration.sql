-- DropIndex
DROP INDEX "InternalAccount_customerId_idx";

-- DropIndex
DROP INDEX "ExternalAccount_customerId_idx";

-- DropIndex
DROP INDEX "Transaction_customerId_idx";

-- DropIndex
DROP INDEX "Verification_platformId_customerId_idx";

-- DropIndex
DROP INDEX "Card_cardholderId_idx";

-- CreateIndex
CREATE INDEX "InternalAccount_platformId_customerId_createdAt_id_idx" ON "InternalAccount"("platformId", "customerId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "ExternalAccount_platformId_customerId_createdAt_id_idx" ON "ExternalAccount"("platformId", "customerId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Transaction_platformId_customerId_createdAt_id_idx" ON "Transaction"("platformId", "customerId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Transaction_platformId_reference_createdAt_id_idx" ON "Transaction"("platformId", "reference", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Verification_platformId_customerId_createdAt_id_idx" ON "Verification"("platformId", "customerId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Card_platformId_cardholderId_createdAt_id_idx" ON "Card"("platformId", "cardholderId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Card_platformId_platformCardId_createdAt_id_idx" ON "Card"("platformId", "platformCardId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "CardTransaction_platformId_customerId_createdAt_id_idx" ON "CardTransaction"("platformId", "customerId", "createdAt", "id");

