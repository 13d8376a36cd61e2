-- DropIndex
DROP INDEX "Verification_customerId_idx";

-- AlterTable
ALTER TABLE "Platform" ADD COLUMN     "umaDomain" TEXT NOT NULL DEFAULT 'uma.sandbox.localhost';

-- AlterTable: customers of earlier versions carry over. The nested
-- personalInfo and businessInfo become the flat fields, an id stands in for a
-- missing platformCustomerId, and the UMA address is the platform's default.
ALTER TABLE "Customer" ADD COLUMN     "currencies" TEXT NOT NULL DEFAULT '[]',
ADD COLUMN     "deletedAt" TIMESTAMP(3),
ADD COLUMN     "details" TEXT NOT NULL DEFAULT '{}',
ADD COLUMN     "email" TEXT,
ADD COLUMN     "endUserTermsConsent" TEXT,
ADD COLUMN     "phoneNumber" TEXT,
ADD COLUMN     "region" TEXT,
ADD COLUMN     "umaAddress" TEXT,
ALTER COLUMN "kycStatus" DROP NOT NULL;

UPDATE "Customer" SET
    "platformCustomerId" = COALESCE("platformCustomerId", "id"),
    "umaAddress" = '$' || lower(COALESCE("platformCustomerId", substr("id", 10))) || '@uma.sandbox.localhost',
    "email" = COALESCE("personalInfo"::jsonb ->> 'email', "businessInfo"::jsonb ->> 'email'),
    "phoneNumber" = "personalInfo"::jsonb ->> 'phoneNumber',
    "kycStatus" = CASE WHEN "customerType" = 'INDIVIDUAL' THEN "kycStatus" END,
    "kybStatus" = CASE WHEN "customerType" = 'BUSINESS' THEN COALESCE("kybStatus", 'UNVERIFIED') END,
    "details" = CASE WHEN "customerType" = 'BUSINESS'
        THEN jsonb_build_object('businessInfo', "businessInfo"::jsonb - 'email')::text
        ELSE jsonb_strip_nulls(jsonb_build_object(
            'fullName', ("personalInfo"::jsonb ->> 'firstName') || ' ' || ("personalInfo"::jsonb ->> 'lastName'),
            'birthDate', "personalInfo"::jsonb ->> 'dateOfBirth',
            'nationality', "personalInfo"::jsonb ->> 'nationality'))::text
    END;

ALTER TABLE "Customer" DROP COLUMN "beneficialOwners",
DROP COLUMN "businessInfo",
DROP COLUMN "personalInfo",
ALTER COLUMN "umaAddress" SET NOT NULL,
ALTER COLUMN "platformCustomerId" SET NOT NULL;

-- AlterTable: a verification's outcome becomes its verificationStatus.
ALTER TABLE "Verification" ADD COLUMN     "errors" TEXT NOT NULL DEFAULT '[]',
ADD COLUMN     "updatedAt" TIMESTAMP(3),
ADD COLUMN     "verificationStatus" TEXT;

UPDATE "Verification" SET
    "updatedAt" = "createdAt",
    "verificationStatus" = CASE "kybStatus" WHEN 'PENDING' THEN 'PENDING_MANUAL_REVIEW' ELSE "kybStatus" END;

ALTER TABLE "Verification" DROP COLUMN "kybStatus",
ALTER COLUMN "updatedAt" SET NOT NULL,
ALTER COLUMN "verificationStatus" SET NOT NULL;

-- CreateTable
CREATE TABLE "BeneficialOwner" (
    "id" TEXT NOT NULL,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "roles" TEXT NOT NULL,
    "ownershipPercentage" INTEGER NOT NULL,
    "personalInfo" TEXT NOT NULL,
    "kycStatus" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "BeneficialOwner_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "BeneficialOwner_platformId_customerId_createdAt_id_idx" ON "BeneficialOwner"("platformId", "customerId", "createdAt", "id");

-- CreateIndex
CREATE UNIQUE INDEX "Customer_platformId_umaAddress_key" ON "Customer"("platformId", "umaAddress");

-- CreateIndex
CREATE INDEX "Verification_platformId_customerId_idx" ON "Verification"("platformId", "customerId");

-- CreateIndex
CREATE INDEX "Verification_platformId_createdAt_id_idx" ON "Verification"("platformId", "createdAt", "id");

