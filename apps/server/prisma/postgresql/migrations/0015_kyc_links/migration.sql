-- CreateTable
CREATE TABLE "KycLink" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "redirectUri" TEXT,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "usedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "KycLink_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "KycLink_platformId_customerId_idx" ON "KycLink"("platformId", "customerId");

