// Generated from prisma/schema.base.prisma by scripts/gen-schemas.mjs: do not edit.
import type { Generated } from "kysely";

export interface InternalAccount {
  id: string;
  platformId: string;
  customerId: string | null;
  type: string;
  currency: string;
  balance: Generated<bigint>;
  status: string;
  privacyEnabled: Generated<boolean>;
  walletPrivateKey: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface LedgerEntry {
  id: string;
  platformId: string;
  accountId: string;
  amount: bigint;
  balanceAfter: bigint;
  kind: string;
  reference: string | null;
  createdAt: Date;
}

export interface ExternalAccount {
  id: string;
  platformId: string;
  customerId: string | null;
  currency: string;
  accountType: string;
  accountInfo: string;
  identifier: string;
  beneficiaryName: string;
  beneficiaryVerificationStatus: string;
  status: Generated<string>;
  ownershipType: string | null;
  platformAccountId: string | null;
  defaultUmaDepositAccount: Generated<boolean>;
  scaTrustedAt: Date | null;
  ownershipChallenge: string | null;
  deletedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface Transaction {
  id: string;
  platformId: string;
  type: string;
  status: string;
  failureReason: string | null;
  internalAccountId: string | null;
  externalAccountId: string | null;
  quoteId: string | null;
  customerId: string | null;
  agentId: string | null;
  amount: bigint;
  currency: string;
  direction: string;
  umaAddress: string | null;
  receivedAmount: bigint | null;
  receivedCurrency: string | null;
  exchangeRate: string | null;
  reference: string | null;
  description: string | null;
  refundStatus: string | null;
  refundReason: string | null;
  refundedAt: Date | null;
  receiptDeliveryConfirmedAt: Date | null;
  stepsApplied: Generated<number>;
  agentUsageAmount: bigint | null;
  agentUsageAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
}

export interface Quote {
  id: string;
  platformId: string;
  customerId: string | null;
  agentId: string | null;
  status: string;
  source: string;
  destination: string;
  sourceAccountId: string | null;
  destinationExternalAccountId: string | null;
  receiverAccountId: string | null;
  sendingCurrency: string;
  receivingCurrency: string;
  sendingAmount: bigint;
  receivingAmount: bigint;
  exchangeRate: string;
  feeAmount: bigint;
  paymentReference: string | null;
  expiresAt: Date;
  transactionId: string | null;
  scaChallengeId: string | null;
  scaFactor: string | null;
  scaExpiresAt: Date | null;
  scaAttempts: Generated<number>;
  payloadToSign: string | null;
  createdAt: Date;
  updatedAt: Date;
}
