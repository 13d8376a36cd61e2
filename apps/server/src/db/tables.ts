// Generated from prisma/schema.base.prisma by scripts/gen-schemas.mjs: do not edit.
import type { Generated } from "kysely";

export interface Platform {
  id: string;
  name: string;
  webhookUrl: string | null;
  webhookPrivateKey: string;
  otpSigningPrivateKey: string;
  clockOffsetSeconds: Generated<number>;
  umaDomain: Generated<string>;
  supportedCurrencies: string | null;
  embeddedWalletConfig: string | null;
  cardTokenization2faConfig: string | null;
  feeConfigs: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ApiToken {
  id: string;
  platformId: string;
  name: string;
  permissions: string;
  secretSalt: string;
  secretHash: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface Customer {
  id: string;
  platformId: string;
  customerType: string;
  platformCustomerId: string;
  umaAddress: string;
  region: string | null;
  currencies: Generated<string>;
  email: string | null;
  phoneNumber: string | null;
  details: Generated<string>;
  endUserTermsConsent: string | null;
  kycStatus: string | null;
  kybStatus: string | null;
  verifiedEmail: string | null;
  verifiedPhoneNumber: string | null;
  deletedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface BeneficialOwner {
  id: string;
  platformId: string;
  customerId: string;
  roles: string;
  ownershipPercentage: number;
  personalInfo: string;
  kycStatus: string;
  createdAt: Date;
  updatedAt: Date;
}

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

export interface AuthMethod {
  id: string;
  platformId: string;
  accountId: string;
  type: string;
  nickname: string;
  credentialId: string | null;
  oauthIssuer: string | null;
  oauthAudience: string | null;
  oauthSubject: string | null;
  passkeyPublicKey: string | null;
  passkeyCounter: bigint | null;
  passkeyTransports: string | null;
  otpTargetPrivateKey: string | null;
  otpExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface AuthSession {
  id: string;
  platformId: string;
  accountId: string;
  authMethodId: string;
  type: string;
  nickname: string;
  credentialId: string | null;
  publicKey: string;
  expiresAt: Date;
  revokedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface SignedChallenge {
  id: string;
  platformId: string;
  accountId: string;
  activity: string;
  payload: string;
  bindingDigest: string;
  signerKind: string;
  signerPublicKey: string | null;
  authMethodId: string | null;
  authType: string | null;
  data: string | null;
  expiresAt: Date;
  consumedAt: Date | null;
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

export interface RateLimit {
  key: string;
  times: string;
}

export interface WebhookEvent {
  id: string;
  platformId: string;
  type: string;
  objectId: string;
  seq: Generated<bigint>;
  payload: string;
  createdAt: Date;
  status: string;
  attemptCount: Generated<number>;
  replayCount: Generated<number>;
  nextAttemptAt: Date;
  firstAttemptAt: Date | null;
  lockedUntil: Date | null;
  lockedBy: string | null;
  deliveredAt: Date | null;
}

export interface EventOrder {
  platformId: string;
  objectId: string;
  seq: bigint;
  at: Date;
}

export interface WebhookAttempt {
  id: string;
  eventId: string;
  attemptedAt: Date;
  httpStatus: number | null;
  latencyMs: number;
  error: string | null;
}

export interface Job {
  id: string;
  platformId: string;
  kind: string;
  payload: string;
  dueAt: Date;
  status: string;
  attempts: Generated<number>;
  lastError: string | null;
  lockedUntil: Date | null;
  lockedBy: string | null;
  createdAt: Date;
  updatedAt: Date;
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

export interface Verification {
  id: string;
  platformId: string;
  customerId: string;
  verificationStatus: string;
  errors: Generated<string>;
  createdAt: Date;
  updatedAt: Date;
}

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

export interface IdempotencyRecord {
  platformId: string;
  key: string;
  requestHash: string;
  status: string;
  responseStatus: number | null;
  responseBody: string | null;
  lockedUntil: Date;
  createdAt: Date;
  expiresAt: Date;
}

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

export interface KycLink {
  id: string;
  platformId: string;
  customerId: string;
  redirectUri: string | null;
  expiresAt: Date;
  usedAt: Date | null;
  createdAt: Date;
}

export interface Document {
  id: string;
  platformId: string;
  documentHolder: string;
  documentType: string;
  side: string | null;
  country: string;
  documentNumber: string | null;
  issuingAuthority: string | null;
  fileName: string;
  contentType: string;
  size: number;
  sha256: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface LookupRequest {
  id: string;
  platformId: string;
  kind: string;
  target: string;
  customerId: string | null;
  currencies: string;
  createdAt: Date;
}

export interface BulkImportJob {
  id: string;
  platformId: string;
  status: string;
  csv: string | null;
  total: Generated<number>;
  processed: Generated<number>;
  successful: Generated<number>;
  failed: Generated<number>;
  errors: Generated<string>;
  completedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ContactVerificationCode {
  id: string;
  platformId: string;
  customerId: string;
  channel: string;
  sentTo: string;
  attempts: Generated<number>;
  expiresAt: Date;
  createdAt: Date;
}

export interface Invitation {
  code: string;
  platformId: string;
  inviterCustomerId: string;
  inviterUma: string;
  inviteeUma: string | null;
  firstName: string | null;
  amountToSend: bigint | null;
  currency: string | null;
  url: string;
  status: string;
  expiresAt: Date | null;
  claimedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

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

export interface ScaFactor {
  id: string;
  platformId: string;
  customerId: string;
  factor: string;
  status: string;
  secret: string | null;
  credentialId: string | null;
  publicKey: string | null;
  counter: Generated<number>;
  transports: string | null;
  name: string | null;
  webauthnChallenge: string | null;
  attempts: Generated<number>;
  expiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface ScaChallenge {
  id: string;
  platformId: string;
  customerId: string;
  purpose: string;
  subjectId: string;
  factor: string;
  webauthnChallenge: string | null;
  attempts: Generated<number>;
  expiresAt: Date;
  createdAt: Date;
}

export interface ScaLoginState {
  customerId: string;
  platformId: string;
  sessionExpiresAt: Date | null;
  failedAttempts: Generated<number>;
  lockedUntil: Date | null;
  suspended: Generated<boolean>;
  updatedAt: Date;
}

export interface ScaFactorReset {
  id: string;
  platformId: string;
  customerId: string;
  factor: string;
  livenessAccessToken: string;
  livenessPassesAt: Date;
  expiresAt: Date;
  completedAt: Date | null;
  createdAt: Date;
}

export interface Tables {
  Platform: Platform;
  ApiToken: ApiToken;
  Customer: Customer;
  BeneficialOwner: BeneficialOwner;
  InternalAccount: InternalAccount;
  LedgerEntry: LedgerEntry;
  AuthMethod: AuthMethod;
  AuthSession: AuthSession;
  SignedChallenge: SignedChallenge;
  DelegatedKey: DelegatedKey;
  RateLimit: RateLimit;
  WebhookEvent: WebhookEvent;
  EventOrder: EventOrder;
  WebhookAttempt: WebhookAttempt;
  Job: Job;
  ExternalAccount: ExternalAccount;
  Transaction: Transaction;
  Quote: Quote;
  Verification: Verification;
  Agent: Agent;
  AgentAction: AgentAction;
  AgentAccessToken: AgentAccessToken;
  IdempotencyRecord: IdempotencyRecord;
  Card: Card;
  CardTransaction: CardTransaction;
  CardTransactionEvent: CardTransactionEvent;
  CardRevealToken: CardRevealToken;
  KycLink: KycLink;
  Document: Document;
  LookupRequest: LookupRequest;
  BulkImportJob: BulkImportJob;
  ContactVerificationCode: ContactVerificationCode;
  Invitation: Invitation;
  StablecoinProviderAccount: StablecoinProviderAccount;
  Stablecoin: Stablecoin;
  StablecoinOperation: StablecoinOperation;
  ScaFactor: ScaFactor;
  ScaChallenge: ScaChallenge;
  ScaLoginState: ScaLoginState;
  ScaFactorReset: ScaFactorReset;
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
