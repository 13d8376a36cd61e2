// Generated from prisma/schema.base.prisma by scripts/gen-schemas.mjs: do not edit.
export interface StablecoinProviderAccount {
  id: string;
  platformId: string;
  provider: string;
  providerAccountId: string;
  providerEnvironment: string;
  status: string;
  apiClientId: string;
  apiClientSecretSha256: string;
  lastVerifiedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface Stablecoin {
  id: string;
  platformId: string;
  name: string;
  symbol: string;
  baseCurrency: string;
  network: string;
  decimals: number;
  issuanceStatus: string;
  gridOperationsStatus: string;
  networkTokenIdentifier: string;
  currency: string | null;
  provider: string;
  stablecoinProviderAccountId: string;
  providerEnvironment: string;
  providerTokenIdentifier: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface StablecoinOperation {
  id: string;
  platformId: string;
  stablecoinId: string;
  operationType: string;
  status: string;
  amount: bigint;
  fiatAmount: bigint;
  provider: string;
  providerEnvironment: string;
  stablecoinProviderAccountId: string;
  source: string;
  destination: string;
  fundingInstructions: string | null;
  estimatedDelivery: string | null;
  outcome: string;
  debitedAccountId: string | null;
  debitedAmount: bigint | null;
  creditAccountId: string | null;
  expiresAt: Date | null;
  failureReason: string | null;
  description: string | null;
  createdAt: Date;
  updatedAt: Date;
}
