-- AlterTable
ALTER TABLE "CardTransaction" ADD COLUMN     "direction" TEXT NOT NULL DEFAULT 'DEBIT';

