-- AlterTable
ALTER TABLE "Card" ADD COLUMN "maxSpendPerTransaction" BIGINT;

