-- AlterTable
ALTER TABLE "Customer" ADD COLUMN     "verifiedEmail" TEXT,
ADD COLUMN     "verifiedPhoneNumber" TEXT;

-- CreateTable
CREATE TABLE "ContactVerificationCode" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "channel" TEXT NOT NULL,
    "sentTo" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ContactVerificationCode_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Invitation" (
    "code" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "inviterCustomerId" TEXT NOT NULL,
    "inviterUma" TEXT NOT NULL,
    "inviteeUma" TEXT,
    "firstName" TEXT,
    "amountToSend" BIGINT,
    "currency" TEXT,
    "url" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3),
    "claimedAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "Invitation_pkey" PRIMARY KEY ("code")
);

-- CreateIndex
CREATE UNIQUE INDEX "ContactVerificationCode_customerId_channel_key" ON "ContactVerificationCode"("customerId", "channel");

