-- CreateTable
CREATE TABLE "LookupRequest" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "customerId" TEXT,
    "currencies" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "LookupRequest_platformId_createdAt_idx" ON "LookupRequest"("platformId", "createdAt");

