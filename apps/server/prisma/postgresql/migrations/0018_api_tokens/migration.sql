-- DropIndex
DROP INDEX "ApiToken_platformId_idx";

-- AlterTable: tokens made before tokens had names and permissions (each
-- platform's start-up token) carry over with every permission, as they had
-- in effect.
ALTER TABLE "ApiToken" ADD COLUMN     "name" TEXT,
ADD COLUMN     "permissions" TEXT,
ADD COLUMN     "updatedAt" TIMESTAMP(3);

UPDATE "ApiToken" SET
    "name" = 'Sandbox token',
    "permissions" = '["VIEW","TRANSACT","MANAGE"]',
    "updatedAt" = "createdAt";

ALTER TABLE "ApiToken" ALTER COLUMN "name" SET NOT NULL,
ALTER COLUMN "permissions" SET NOT NULL,
ALTER COLUMN "updatedAt" SET NOT NULL;

-- CreateIndex
CREATE INDEX "ApiToken_platformId_createdAt_id_idx" ON "ApiToken"("platformId", "createdAt", "id");

