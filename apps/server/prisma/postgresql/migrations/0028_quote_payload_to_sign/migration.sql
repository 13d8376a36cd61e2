-- AlterTable
ALTER TABLE "Quote" ADD COLUMN     "payloadToSign" TEXT;

