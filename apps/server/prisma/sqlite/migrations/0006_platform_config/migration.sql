-- AlterTable
ALTER TABLE "Platform" ADD COLUMN "cardTokenization2faConfig" TEXT;
ALTER TABLE "Platform" ADD COLUMN "embeddedWalletConfig" TEXT;
ALTER TABLE "Platform" ADD COLUMN "feeConfigs" TEXT;
ALTER TABLE "Platform" ADD COLUMN "supportedCurrencies" TEXT;

