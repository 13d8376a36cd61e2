// Generated from prisma/schema.base.prisma by scripts/gen-schemas.mjs: do not edit.
import type { Generated } from "kysely";

export interface Card {
  id: string;
  platformId: string;
  cardholderId: string;
  platformCardId: string | null;
  state: string;
  stateReason: string | null;
  brand: string;
  form: string;
  last4: string;
  expMonth: number;
  expYear: number;
  fundingSources: string;
  maxSpendPerTransaction: bigint | null;
  currency: string;
  processorRef: string;
  issuerRef: string;
  pendingIssuance: string | null;
  version: Generated<number>;
  createdAt: Date;
  updatedAt: Date;
}

export interface CardTransaction {
  id: string;
  platformId: string;
  cardId: string;
  customerId: string;
  platformCustomerId: string | null;
  fundingSourceId: string | null;
  status: string;
  declineReason: string | null;
  merchantDescriptor: string;
  merchantMcc: string | null;
  merchantCountry: string | null;
  currency: string;
  authorizedAmount: bigint;
  heldAmount: bigint;
  settledAmount: bigint;
  refundedAmount: bigint;
  pullCount: number;
  pullTotal: bigint;
  pullPending: number;
  settlementCount: number;
  settlementTotal: bigint;
  refundCount: number;
  refundTotal: bigint;
  version: Generated<number>;
  authorizedAt: Date;
  lastEventAt: Date;
  createdAt: Date;
  updatedAt: Date;
  direction: Generated<string>;
}

export interface CardTransactionEvent {
  id: string;
  platformId: string;
  cardTransactionId: string;
  kind: string;
  amount: bigint;
  status: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface CardRevealToken {
  id: string;
  platformId: string;
  cardId: string;
  expiresAt: Date;
  usedAt: Date | null;
  createdAt: Date;
}

export interface DelegatedKey {
  id: string;
  platformId: string;
  cardId: string;
  fundingSourceId: string;
  accountId: string;
  publicKey: string;
  privateKey: string;
  nickname: string;
  status: string;
  activeFundingSourceId: string | null;
  createdAt: Date;
  updatedAt: Date;
}
