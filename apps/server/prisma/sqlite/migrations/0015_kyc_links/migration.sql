-- CreateTable
CREATE TABLE "KycLink" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "redirectUri" TEXT,
    "expiresAt" DATETIME NOT NULL,
    "usedAt" DATETIME,
    "createdAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "KycLink_platformId_customerId_idx" ON "KycLink"("platformId", "customerId");

