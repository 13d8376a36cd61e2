-- CreateIndex
CREATE INDEX "Customer_platformId_deletedAt_createdAt_id_idx" ON "Customer"("platformId", "deletedAt", "createdAt", "id");

