// Generated from prisma/schema.base.prisma by scripts/gen-schemas.mjs: do not edit.
// Every table's row type (by area, in tables/), the `Tables` map Kysely is
// typed with, and the stored form of columns.
import type * as platform from "./tables/platform.js";
import type * as customers from "./tables/customers.js";
import type * as money from "./tables/money.js";
import type * as walletAuth from "./tables/wallet-auth.js";
import type * as webhooks from "./tables/webhooks.js";
import type * as agents from "./tables/agents.js";
import type * as cards from "./tables/cards.js";
import type * as stablecoins from "./tables/stablecoins.js";
import type * as sca from "./tables/sca.js";

export type * from "./tables/platform.js";
export type * from "./tables/customers.js";
export type * from "./tables/money.js";
export type * from "./tables/wallet-auth.js";
export type * from "./tables/webhooks.js";
export type * from "./tables/agents.js";
export type * from "./tables/cards.js";
export type * from "./tables/stablecoins.js";
export type * from "./tables/sca.js";

export interface Tables {
  Platform: platform.Platform;
  ApiToken: platform.ApiToken;
  Customer: customers.Customer;
  BeneficialOwner: customers.BeneficialOwner;
  InternalAccount: money.InternalAccount;
  LedgerEntry: money.LedgerEntry;
  AuthMethod: walletAuth.AuthMethod;
  AuthSession: walletAuth.AuthSession;
  SignedChallenge: walletAuth.SignedChallenge;
  DelegatedKey: cards.DelegatedKey;
  RateLimit: platform.RateLimit;
  WebhookEvent: webhooks.WebhookEvent;
  EventOrder: webhooks.EventOrder;
  WebhookAttempt: webhooks.WebhookAttempt;
  Job: platform.Job;
  ExternalAccount: money.ExternalAccount;
  Transaction: money.Transaction;
  Quote: money.Quote;
  Verification: customers.Verification;
  Agent: agents.Agent;
  AgentAction: agents.AgentAction;
  AgentAccessToken: agents.AgentAccessToken;
  IdempotencyRecord: platform.IdempotencyRecord;
  Card: cards.Card;
  CardTransaction: cards.CardTransaction;
  CardTransactionEvent: cards.CardTransactionEvent;
  CardRevealToken: cards.CardRevealToken;
  KycLink: customers.KycLink;
  Document: customers.Document;
  LookupRequest: customers.LookupRequest;
  BulkImportJob: customers.BulkImportJob;
  ContactVerificationCode: customers.ContactVerificationCode;
  Invitation: customers.Invitation;
  StablecoinProviderAccount: stablecoins.StablecoinProviderAccount;
  Stablecoin: stablecoins.Stablecoin;
  StablecoinOperation: stablecoins.StablecoinOperation;
  ScaFactor: sca.ScaFactor;
  ScaChallenge: sca.ScaChallenge;
  ScaLoginState: sca.ScaLoginState;
  ScaFactorReset: sca.ScaFactorReset;
}

/** Columns whose stored form is not their value, by name (the same in every table). */
export const columnKinds: Readonly<Record<string, "int" | "bigint" | "boolean" | "date">> = {
  agentUsageAmount: "bigint",
  agentUsageAt: "date",
  amount: "bigint",
  amountToSend: "bigint",
  at: "date",
  attemptCount: "int",
  attemptedAt: "date",
  attempts: "int",
  authorizedAmount: "bigint",
  authorizedAt: "date",
  balance: "bigint",
  balanceAfter: "bigint",
  claimedAt: "date",
  clockOffsetSeconds: "int",
  completedAt: "date",
  consumedAt: "date",
  counter: "int",
  createdAt: "date",
  debitedAmount: "bigint",
  decimals: "int",
  defaultUmaDepositAccount: "boolean",
  deletedAt: "date",
  deliveredAt: "date",
  deviceCodeExpiresAt: "date",
  deviceCodeRedeemedAt: "date",
  dueAt: "date",
  expiresAt: "date",
  expMonth: "int",
  expYear: "int",
  failed: "int",
  failedAttempts: "int",
  feeAmount: "bigint",
  fiatAmount: "bigint",
  firstAttemptAt: "date",
  heldAmount: "bigint",
  httpStatus: "int",
  isPaused: "boolean",
  lastEventAt: "date",
  lastVerifiedAt: "date",
  latencyMs: "int",
  livenessPassesAt: "date",
  lockedUntil: "date",
  maxSpendPerTransaction: "bigint",
  nextAttemptAt: "date",
  otpExpiresAt: "date",
  ownershipPercentage: "int",
  passkeyCounter: "bigint",
  privacyEnabled: "boolean",
  processed: "int",
  pullCount: "int",
  pullPending: "int",
  pullTotal: "bigint",
  receiptDeliveryConfirmedAt: "date",
  receivedAmount: "bigint",
  receivingAmount: "bigint",
  refundCount: "int",
  refundedAmount: "bigint",
  refundedAt: "date",
  refundTotal: "bigint",
  replayCount: "int",
  responseStatus: "int",
  revokedAt: "date",
  scaAttempts: "int",
  scaExpiresAt: "date",
  scaTrustedAt: "date",
  sendingAmount: "bigint",
  seq: "bigint",
  sessionExpiresAt: "date",
  settledAmount: "bigint",
  settlementCount: "int",
  settlementTotal: "bigint",
  size: "int",
  stepsApplied: "int",
  successful: "int",
  suspended: "boolean",
  total: "int",
  updatedAt: "date",
  usedAt: "date",
  version: "int",
};
