import { agentMeRoutes } from "./areas/agents/me-routes.js";
import { agentRoutes } from "./areas/agents/routes.js";
import type { AgentService } from "./areas/agents/service.js";
import { apiTokenRoutes } from "./areas/api-tokens/routes.js";
import type { ApiTokenService } from "./areas/api-tokens/service.js";
import type { CredentialService } from "./areas/auth/credentials.js";
import type { LoginService } from "./areas/auth/login.js";
import { authRoutes } from "./areas/auth/routes.js";
import type { SessionService } from "./areas/auth/sessions.js";
import type { DelegatedKeyService } from "./areas/auth/delegated-keys.js";
import { cardSimulationRoutes } from "./areas/card-transactions/routes.js";
import type { CardTransactionService } from "./areas/card-transactions/service.js";
import { cardRoutes } from "./areas/cards/routes.js";
import type { CardService } from "./areas/cards/service.js";
import { beneficialOwnerRoutes } from "./areas/beneficial-owners/routes.js";
import { receiverRoutes } from "./areas/receiver/routes.js";
import { discoveryRoutes } from "./areas/discoveries/routes.js";
import { documentRoutes } from "./areas/documents/routes.js";
import type { DocumentService } from "./areas/documents/service.js";
import { umaProviderRoutes } from "./areas/uma-providers/routes.js";
import { vaspRoutes } from "./areas/vasps/routes.js";
import type { ReceiverService } from "./areas/receiver/service.js";
import type { BeneficialOwnerService } from "./areas/beneficial-owners/service.js";
import type { KycLinkService } from "./areas/customers/kyc-links.js";
import type { ContactVerificationService } from "./areas/customers/contact-verification.js";
import {
  contactVerificationRoutes,
  customerRoutes,
  kycLinkRoutes,
} from "./areas/customers/routes.js";
import type { CustomerService } from "./areas/customers/service.js";
import { externalAccountRoutes } from "./areas/external-accounts/routes.js";
import type { OwnershipVerification } from "./areas/external-accounts/ownership.js";
import type { BulkCustomerImport } from "./areas/customers/bulk-import.js";
import type { ExternalAccountService } from "./areas/external-accounts/service.js";
import { internalAccountRoutes } from "./areas/internal-accounts/routes.js";
import { invitationRoutes } from "./areas/invitations/routes.js";
import type { InvitationService } from "./areas/invitations/service.js";
import type { InternalAccountService } from "./areas/internal-accounts/service.js";
import { walletRoutes } from "./areas/internal-accounts/wallet-routes.js";
import type { WalletService } from "./areas/internal-accounts/wallet-service.js";
import { platformRoutes } from "./areas/platform/routes.js";
import type { PlatformService } from "./areas/platform/service.js";
import { quoteRoutes } from "./areas/quotes/routes.js";
import { cryptoRoutes } from "./areas/crypto/routes.js";
import type { QuoteService } from "./areas/quotes/service.js";
import { stablecoinRoutes } from "./areas/stablecoins/routes.js";
import type { StablecoinOperationService } from "./areas/stablecoins/operations.js";
import type { StablecoinProviderAccountService } from "./areas/stablecoins/provider-accounts.js";
import type { StablecoinService } from "./areas/stablecoins/service.js";
import type { BeneficiaryTrustService } from "./areas/sca/beneficiary-trust.js";
import { scaRoutes } from "./areas/sca/routes.js";
import type { ScaService } from "./areas/sca/service.js";
import { sandboxClockRoutes } from "./areas/sandbox-clock/routes.js";
import type { SandboxClockService } from "./areas/sandbox-clock/service.js";
import { sandboxPlatformRoutes } from "./areas/sandbox-platforms/routes.js";
import type { SandboxPlatformService } from "./areas/sandbox-platforms/service.js";
import { sandboxRoutes } from "./areas/sandbox/routes.js";
import type { RequestLog } from "./areas/sandbox-logs/request-log.js";
import { sandboxLogRoutes } from "./areas/sandbox-logs/routes.js";
import type { UmaReceiveService } from "./areas/sandbox/uma-receive.js";
import { transactionRoutes } from "./areas/transactions/routes.js";
import type { TransactionService } from "./areas/transactions/service.js";
import { transferRoutes } from "./areas/transfers/routes.js";
import type { TransferService } from "./areas/transfers/service.js";
import { verificationRoutes } from "./areas/verifications/routes.js";
import type { VerificationService } from "./areas/verifications/service.js";
import { webhookRoutes } from "./areas/webhooks/routes.js";
import type { WebhookService } from "./areas/webhooks/service.js";
import type { IdempotencyStore } from "./http/idempotency.js";
import type { ApiHandlers } from "./http/operations.js";

/** The services the API's handlers call. */
export interface ApiServices {
  agents: AgentService;
  apiTokens: ApiTokenService;
  beneficialOwners: BeneficialOwnerService;
  beneficiaryTrust: BeneficiaryTrustService;
  cards: CardService;
  cardTransactions: CardTransactionService;
  contactVerification: ContactVerificationService;
  credentials: CredentialService;
  customers: CustomerService;
  externalAccounts: ExternalAccountService;
  idempotency: IdempotencyStore;
  internalAccounts: InternalAccountService;
  invitations: InvitationService;
  login: LoginService;
  platform: PlatformService;
  quotes: QuoteService;
  receivers: ReceiverService;
  sandboxClock: SandboxClockService;
  requestLog: RequestLog;
  sandboxPlatforms: SandboxPlatformService;
  sca: ScaService;
  sessions: SessionService;
  stablecoinOperations: StablecoinOperationService;
  stablecoinProviderAccounts: StablecoinProviderAccountService;
  stablecoins: StablecoinService;
  delegatedKeys: DelegatedKeyService;
  transactions: TransactionService;
  ownership: OwnershipVerification;
  bulkImport: BulkCustomerImport;
  kycLinks: KycLinkService;
  documents: DocumentService;
  transfers: TransferService;
  umaReceive: UmaReceiveService;
  verifications: VerificationService;
  wallets: WalletService;
  webhooks: WebhookService;
}

type Joined<Areas> = (Areas extends unknown ? (area: Areas) => void : never) extends (
  area: infer All,
) => void
  ? All
  : never;

/** The areas' handlers as one object; an operation claimed by two areas is refused. */
function join<const Areas extends readonly object[]>(...areas: Areas): Joined<Areas[number]> {
  const joined: Record<string, unknown> = {};
  for (const area of areas) {
    for (const [operationId, handler] of Object.entries(area)) {
      if (operationId in joined) throw new Error(`two areas handle ${operationId}`);
      joined[operationId] = handler;
    }
  }
  // Object.entries forgets which keys each area has; the loop copied them all.
  return joined as Joined<Areas[number]>;
}

/**
 * Every API operation's handler. The declared type is the contract: an
 * operation of openapi.yaml without a handler here does not compile.
 */
export function apiHandlers(s: ApiServices): ApiHandlers {
  return join(
    customerRoutes(s.customers, s.bulkImport),
    kycLinkRoutes(s.kycLinks, s.idempotency),
    documentRoutes(s.documents),
    contactVerificationRoutes(s.contactVerification),
    scaRoutes(s.sca, s.beneficiaryTrust),
    beneficialOwnerRoutes(s.beneficialOwners),
    verificationRoutes(s.verifications),
    internalAccountRoutes(s.internalAccounts),
    walletRoutes(s.wallets),
    externalAccountRoutes(s.externalAccounts, s.ownership),
    transferRoutes(s.transfers, s.idempotency),
    transactionRoutes(s.transactions),
    quoteRoutes(s.quotes, s.idempotency, s.platform),
    cryptoRoutes(s.internalAccounts),
    receiverRoutes(s.receivers),
    discoveryRoutes(),
    umaProviderRoutes(),
    vaspRoutes(),
    invitationRoutes(s.invitations),
    agentRoutes(s.agents),
    agentMeRoutes({
      agents: s.agents,
      transactions: s.transactions,
      quotes: s.quotes,
      transfers: s.transfers,
      internalAccounts: s.internalAccounts,
      externalAccounts: s.externalAccounts,
      idempotency: s.idempotency,
    }),
    cardRoutes(s.cards),
    cardSimulationRoutes(s.cardTransactions),
    stablecoinRoutes(
      s.stablecoinProviderAccounts,
      s.stablecoins,
      s.stablecoinOperations,
      s.idempotency,
    ),
    authRoutes(s.credentials, s.login, s.sessions, s.delegatedKeys),
    sandboxRoutes(s.internalAccounts, s.quotes, s.umaReceive),
    sandboxClockRoutes(s.sandboxClock),
    sandboxLogRoutes(s.requestLog),
    sandboxPlatformRoutes(s.sandboxPlatforms),
    webhookRoutes(s.webhooks),
    platformRoutes(s.platform),
    apiTokenRoutes(s.apiTokens),
  );
}
