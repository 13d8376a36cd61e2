import type { Router } from "express";
import { AgentService } from "./areas/agents/service.js";
import { withoutDeviceCode } from "./areas/agents/routes.js";
import { ApiTokenService } from "./areas/api-tokens/service.js";
import { CredentialService } from "./areas/auth/credentials.js";
import { DelegatedKeyService } from "./areas/auth/delegated-keys.js";
import { LoginService } from "./areas/auth/login.js";
import { OidcVerifier } from "./areas/auth/oidc.js";
import { PasskeyVerifier } from "./areas/auth/passkey.js";
import { SessionService } from "./areas/auth/sessions.js";
import { BeneficialOwnerService } from "./areas/beneficial-owners/service.js";
import { CardTransactionService } from "./areas/card-transactions/service.js";
import { registerCardIssuanceJob } from "./areas/cards/issuance.js";
import { revealPageRoutes, withoutRevealToken } from "./areas/cards/reveal-page.js";
import { CardService } from "./areas/cards/service.js";
import { BulkCustomerImport } from "./areas/customers/bulk-import.js";
import { ContactVerificationService } from "./areas/customers/contact-verification.js";
import { KycLinkService } from "./areas/customers/kyc-links.js";
import { kycPageRoutes, withoutKycLinkToken } from "./areas/customers/kyc-page.js";
import { CustomerService } from "./areas/customers/service.js";
import { DocumentService } from "./areas/documents/service.js";
import { OwnershipVerification } from "./areas/external-accounts/ownership.js";
import { ExternalAccountService } from "./areas/external-accounts/service.js";
import { InternalAccountService } from "./areas/internal-accounts/service.js";
import { WalletService } from "./areas/internal-accounts/wallet-service.js";
import { InvitationService } from "./areas/invitations/service.js";
import { PlatformService } from "./areas/platform/service.js";
import { QuotePayments } from "./areas/quotes/payment.js";
import { QuoteService } from "./areas/quotes/service.js";
import { ReceiverService } from "./areas/receiver/service.js";
import { SandboxClockService } from "./areas/sandbox-clock/service.js";
import { RequestLog } from "./areas/sandbox-logs/request-log.js";
import { SandboxPlatformService } from "./areas/sandbox-platforms/service.js";
import { UmaReceiveService } from "./areas/sandbox/uma-receive.js";
import { BeneficiaryTrustService } from "./areas/sca/beneficiary-trust.js";
import { ScaPasskeys } from "./areas/sca/passkeys.js";
import { ScaService } from "./areas/sca/service.js";
import { StablecoinOperationService } from "./areas/stablecoins/operations.js";
import { StablecoinProviderAccountService } from "./areas/stablecoins/provider-accounts.js";
import { StablecoinService } from "./areas/stablecoins/service.js";
import { TransactionService } from "./areas/transactions/service.js";
import { TransferService } from "./areas/transfers/service.js";
import { UmaDirectory } from "./areas/uma/directory.js";
import { VerificationService } from "./areas/verifications/service.js";
import { WebhookService } from "./areas/webhooks/service.js";
import type { ApiServices } from "./api-handlers.js";
import type { AuthConfig } from "./config.js";
import type { WebhookDispatcher } from "./events/dispatcher.js";
import type { Services } from "./http/context.js";
import type { IdempotencyStore } from "./http/idempotency.js";
import type { ServedOrigin } from "./http/served-origin.js";
import type { JobHandlers } from "./jobs/registry.js";
import type { JobWorker } from "./jobs/worker.js";
import type { Logger } from "./logger.js";
import type { PlatformClocks } from "./platform/platform-clock.js";
import { SignedRequests } from "./signing/signed-requests.js";

/** The server's parts that the areas are made on, all made before them. */
export interface AreaParts {
  services: Services;
  clocks: PlatformClocks;
  jobs: JobWorker;
  /** Where the areas register their delayed outcomes. */
  jobHandlers: JobHandlers;
  /** One object every auth service shares: its passkey origins may be filled in once the server listens. */
  auth: AuthConfig;
  origin: ServedOrigin;
  dispatcher: WebhookDispatcher;
  idempotency: IdempotencyStore;
}

/**
 * Every area's services, each made after the ones it calls, with their
 * delayed outcomes registered on the job worker's handlers: what the API's
 * handlers and the pages call.
 */
export function areaServices(parts: AreaParts): ApiServices {
  const { services, clocks, jobs, jobHandlers, auth, origin, dispatcher, idempotency } = parts;
  const signing = new SignedRequests(services, auth);
  const customers = new CustomerService(services, signing, origin.apiBaseUrl);
  const beneficialOwners = new BeneficialOwnerService(services, customers);
  const contactVerification = new ContactVerificationService(services, customers);
  const invitations = new InvitationService(services, clocks);
  const accounts = new InternalAccountService(services);
  const sandboxClock = new SandboxClockService(services, jobs);
  const oidc = new OidcVerifier(auth);
  const passkeys = new PasskeyVerifier(auth);
  const sessions = new SessionService(services, auth, signing);
  const credentials = new CredentialService(services, auth, signing, accounts, oidc, passkeys);
  const login = new LoginService(services, auth, signing, credentials, sessions, oidc, passkeys);
  const wallets = new WalletService(services, accounts, signing);
  const webhooks = new WebhookService(
    services,
    () => dispatcher.nudge(),
    (url, payload, key) => dispatcher.send(url, payload, key),
  );
  const verifications = new VerificationService(services, customers);
  const externalAccounts = new ExternalAccountService(services, customers);
  const sca = new ScaService(services, customers, new ScaPasskeys(auth));
  const beneficiaryTrust = new BeneficiaryTrustService(services, customers, externalAccounts);
  const ownership = new OwnershipVerification(services, externalAccounts, origin.apiBaseUrl);
  const transactions = new TransactionService(services);
  const transfers = new TransferService(services, accounts, externalAccounts, transactions);
  const umaDirectory = new UmaDirectory(services);
  const quotePayments = new QuotePayments();
  const quotes = new QuoteService(
    services,
    accounts,
    externalAccounts,
    umaDirectory,
    quotePayments,
    transactions,
    signing,
  );
  const umaReceive = new UmaReceiveService(services, umaDirectory, customers, transactions);
  const receivers = new ReceiverService(services, customers, externalAccounts, umaDirectory);
  const agents = new AgentService(services, customers, clocks, transactions);
  transfers.registerJobs(jobHandlers);
  ownership.registerJobs(jobHandlers);
  const bulkImport = new BulkCustomerImport(services, customers);
  bulkImport.registerJobs(jobHandlers);
  const kycLinks = new KycLinkService(services, customers, clocks, origin.origin);
  const documents = new DocumentService(services, customers, beneficialOwners);
  quotePayments.registerJobs(jobHandlers);
  umaReceive.registerJobs(jobHandlers);

  const cards = new CardService(services, customers, clocks, origin.origin);
  const delegatedKeys = new DelegatedKeyService(services, signing, cards, accounts);
  const cardTransactions = new CardTransactionService(services, cards, delegatedKeys);
  registerCardIssuanceJob(jobHandlers);
  cardTransactions.registerJobs(jobHandlers);
  const stablecoinProviderAccounts = new StablecoinProviderAccountService(services);
  const stablecoins = new StablecoinService(services, stablecoinProviderAccounts);
  const stablecoinOperations = new StablecoinOperationService(
    services,
    stablecoins,
    accounts,
    externalAccounts,
  );
  stablecoinOperations.registerJobs(jobHandlers);

  return {
    agents,
    apiTokens: new ApiTokenService(services),
    beneficialOwners,
    beneficiaryTrust,
    cards,
    cardTransactions,
    contactVerification,
    credentials,
    customers,
    delegatedKeys,
    externalAccounts,
    idempotency,
    ownership,
    bulkImport,
    kycLinks,
    documents,
    internalAccounts: accounts,
    invitations,
    login,
    platform: new PlatformService(services),
    quotes,
    receivers,
    sandboxClock,
    requestLog: new RequestLog(),
    sandboxPlatforms: new SandboxPlatformService(services, jobs),
    sca,
    sessions,
    stablecoinOperations,
    stablecoinProviderAccounts,
    stablecoins,
    transactions,
    transfers,
    umaReceive,
    verifications,
    wallets,
    webhooks,
  };
}

/** The areas' pages outside the versioned API (card reveal, hosted KYC). */
export function areaPages(areas: ApiServices, log: Logger): Router[] {
  return [revealPageRoutes(areas.cards, log), kycPageRoutes(areas.kycLinks, log)];
}

/** A request path as logged: without the tokens some areas carry in their paths. */
export function withoutPathTokens(path: string): string {
  return withoutDeviceCode(withoutKycLinkToken(withoutRevealToken(path)));
}
