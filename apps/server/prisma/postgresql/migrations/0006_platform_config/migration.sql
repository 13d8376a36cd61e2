-- AlterTable
ALTER TABLE "Platform" ADD COLUMN     "cardTokenization2faConfig" TEXT,
ADD COLUMN     "embeddedWalletConfig" TEXT,
ADD COLUMN     "feeConfigs" TEXT,
ADD COLUMN     "supportedCurrencies" TEXT;

