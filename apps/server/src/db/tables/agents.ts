// Generated from prisma/schema.base.prisma by scripts/gen-schemas.mjs: do not edit.
import type { Generated } from "kysely";

export interface Agent {
  id: string;
  platformId: string;
  customerId: string;
  name: string;
  policy: string;
  deviceCodeHash: string;
  deviceCodeExpiresAt: Date;
  deviceCodeRedeemedAt: Date | null;
  isPaused: Generated<boolean>;
  createdAt: Date;
  updatedAt: Date;
}

export interface AgentAction {
  id: string;
  platformId: string;
  agentId: string;
  customerId: string;
  type: string;
  status: string;
  transactionId: string;
  quoteId: string | null;
  amount: bigint | null;
  currency: string | null;
  sourceAccountId: string | null;
  destinationAccountId: string | null;
  rejectionReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface AgentAccessToken {
  tokenHash: string;
  agentId: string;
  platformId: string;
  expiresAt: Date | null;
  createdAt: Date;
}
