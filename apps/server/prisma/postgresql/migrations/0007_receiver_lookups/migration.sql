-- CreateTable
CREATE TABLE "LookupRequest" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "customerId" TEXT,
    "currencies" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "LookupRequest_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "LookupRequest_platformId_createdAt_idx" ON "LookupRequest"("platformId", "createdAt");

