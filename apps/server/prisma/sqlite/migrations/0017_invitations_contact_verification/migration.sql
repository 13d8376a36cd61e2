-- AlterTable
ALTER TABLE "Customer" ADD COLUMN "verifiedEmail" TEXT;
ALTER TABLE "Customer" ADD COLUMN "verifiedPhoneNumber" TEXT;

-- CreateTable
CREATE TABLE "ContactVerificationCode" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "sentTo" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "expiresAt" DATETIME NOT NULL,
    "createdAt" DATETIME NOT NULL
);

-- CreateTable
CREATE TABLE "Invitation" (
    "code" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "inviterCustomerId" TEXT NOT NULL,
    "inviterUma" TEXT NOT NULL,
    "inviteeUma" TEXT,
    "firstName" TEXT,
    "amountToSend" BIGINT,
    "currency" TEXT,
    "url" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "expiresAt" DATETIME,
    "claimedAt" DATETIME,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE UNIQUE INDEX "ContactVerificationCode_customerId_channel_key" ON "ContactVerificationCode"("customerId", "channel");

