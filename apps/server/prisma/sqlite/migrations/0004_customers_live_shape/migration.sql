-- CreateTable
CREATE TABLE "BeneficialOwner" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "roles" TEXT NOT NULL,
    "ownershipPercentage" INTEGER NOT NULL,
    "personalInfo" TEXT NOT NULL,
    "kycStatus" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Platform" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "webhookUrl" TEXT,
    "webhookPrivateKey" TEXT NOT NULL,
    "otpSigningPrivateKey" TEXT NOT NULL,
    "clockOffsetSeconds" INTEGER NOT NULL DEFAULT 0,
    "umaDomain" TEXT NOT NULL DEFAULT 'uma.sandbox.localhost',
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);
INSERT INTO "new_Platform" ("clockOffsetSeconds", "createdAt", "id", "name", "otpSigningPrivateKey", "updatedAt", "webhookPrivateKey", "webhookUrl") SELECT "clockOffsetSeconds", "createdAt", "id", "name", "otpSigningPrivateKey", "updatedAt", "webhookPrivateKey", "webhookUrl" FROM "Platform";
DROP TABLE "Platform";
ALTER TABLE "new_Platform" RENAME TO "Platform";
CREATE TABLE "new_Customer" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "customerType" TEXT NOT NULL,
    "platformCustomerId" TEXT NOT NULL,
    "umaAddress" TEXT NOT NULL,
    "region" TEXT,
    "currencies" TEXT NOT NULL DEFAULT '[]',
    "email" TEXT,
    "phoneNumber" TEXT,
    "details" TEXT NOT NULL DEFAULT '{}',
    "endUserTermsConsent" TEXT,
    "kycStatus" TEXT,
    "kybStatus" TEXT,
    "deletedAt" DATETIME,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);
-- Customers of earlier versions carry over: the nested personalInfo and
-- businessInfo become the flat fields, an id stands in for a missing
-- platformCustomerId, and the UMA address is the platform's default.
INSERT INTO "new_Customer" ("createdAt", "customerType", "id", "kybStatus", "kycStatus", "platformCustomerId", "umaAddress", "email", "phoneNumber", "details", "platformId", "updatedAt")
SELECT "createdAt", "customerType", "id",
    CASE WHEN "customerType" = 'BUSINESS' THEN COALESCE("kybStatus", 'UNVERIFIED') END,
    CASE WHEN "customerType" = 'INDIVIDUAL' THEN "kycStatus" END,
    COALESCE("platformCustomerId", "id"),
    '$' || lower(COALESCE("platformCustomerId", substr("id", 10))) || '@uma.sandbox.localhost',
    COALESCE(json_extract("personalInfo", '$.email'), json_extract("businessInfo", '$.email')),
    json_extract("personalInfo", '$.phoneNumber'),
    CASE WHEN "customerType" = 'BUSINESS'
        THEN json_object('businessInfo', json(json_remove("businessInfo", '$.email')))
        ELSE json_patch('{}', json_object(
            'fullName', json_extract("personalInfo", '$.firstName') || ' ' || json_extract("personalInfo", '$.lastName'),
            'birthDate', json_extract("personalInfo", '$.dateOfBirth'),
            'nationality', json_extract("personalInfo", '$.nationality')))
    END,
    "platformId", "updatedAt"
FROM "Customer";
DROP TABLE "Customer";
ALTER TABLE "new_Customer" RENAME TO "Customer";
CREATE INDEX "Customer_platformId_createdAt_id_idx" ON "Customer"("platformId", "createdAt", "id");
CREATE UNIQUE INDEX "Customer_platformId_platformCustomerId_key" ON "Customer"("platformId", "platformCustomerId");
CREATE UNIQUE INDEX "Customer_platformId_umaAddress_key" ON "Customer"("platformId", "umaAddress");
CREATE TABLE "new_Verification" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "platformId" TEXT NOT NULL,
    "customerId" TEXT NOT NULL,
    "verificationStatus" TEXT NOT NULL,
    "errors" TEXT NOT NULL DEFAULT '[]',
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL
);
INSERT INTO "new_Verification" ("createdAt", "customerId", "id", "platformId", "verificationStatus", "updatedAt")
SELECT "createdAt", "customerId", "id", "platformId",
    CASE "kybStatus" WHEN 'PENDING' THEN 'PENDING_MANUAL_REVIEW' ELSE "kybStatus" END, "createdAt"
FROM "Verification";
DROP TABLE "Verification";
ALTER TABLE "new_Verification" RENAME TO "Verification";
CREATE INDEX "Verification_platformId_customerId_idx" ON "Verification"("platformId", "customerId");
CREATE INDEX "Verification_platformId_createdAt_id_idx" ON "Verification"("platformId", "createdAt", "id");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE INDEX "BeneficialOwner_platformId_customerId_createdAt_id_idx" ON "BeneficialOwner"("platformId", "customerId", "createdAt", "id");

