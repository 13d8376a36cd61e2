-- CreateTable
CREATE TABLE "Document" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "documentHolder" TEXT NOT NULL,
    "documentType" TEXT NOT NULL,
    "side" TEXT,
    "country" TEXT NOT NULL,
    "documentNumber" TEXT,
    "issuingAuthority" TEXT,
    "fileName" TEXT NOT NULL,
    "contentType" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "sha256" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Document_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "Document_platformId_createdAt_id_idx" ON "Document"("platformId", "createdAt", "id");

-- CreateIndex
CREATE INDEX "Document_platformId_documentHolder_createdAt_id_idx" ON "Document"("platformId", "documentHolder", "createdAt", "id");

