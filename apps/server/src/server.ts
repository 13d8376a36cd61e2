import type { Server } from "node:http";
import type { Express } from "express";
import type { AddressInfo } from "node:net";
import { CardService } from "./areas/cards/service.js";
import { StablecoinOperationService } from "./areas/stablecoins/operations.js";
import { StablecoinProviderAccountService } from "./areas/stablecoins/provider-accounts.js";
import { StablecoinService } from "./areas/stablecoins/service.js";
import { revealPageRoutes, withoutRevealToken } from "./areas/cards/reveal-page.js";
import { kycPageRoutes, withoutKycLinkToken } from "./areas/customers/kyc-page.js";
import { PASSKEY_DEMO_PATH, passkeyDemoRoutes } from "./http/passkey-demo.js";
import { KycLinkService } from "./areas/customers/kyc-links.js";
import { DocumentService } from "./areas/documents/service.js";
import { registerCardIssuanceJob } from "./areas/cards/issuance.js";
import { CardTransactionService } from "./areas/card-transactions/service.js";
import { BeneficialOwnerService } from "./areas/beneficial-owners/service.js";
import { ReceiverService } from "./areas/receiver/service.js";
import { CustomerService } from "./areas/customers/service.js";
import { ContactVerificationService } from "./areas/customers/contact-verification.js";
import { InvitationService } from "./areas/invitations/service.js";
import { InternalAccountService } from "./areas/internal-accounts/service.js";
import { createPlatform } from "./areas/platform/creation.js";
import { PlatformService } from "./areas/platform/service.js";
import { UmaReceiveService } from "./areas/sandbox/uma-receive.js";
import { AgentService } from "./areas/agents/service.js";
import { withoutDeviceCode } from "./areas/agents/routes.js";
import { ExternalAccountService } from "./areas/external-accounts/service.js";
import { OwnershipVerification } from "./areas/external-accounts/ownership.js";
import { BulkCustomerImport } from "./areas/customers/bulk-import.js";
import { QuotePayments } from "./areas/quotes/payment.js";
import { QuoteService } from "./areas/quotes/service.js";
import { TransactionService } from "./areas/transactions/service.js";
import { TransferService } from "./areas/transfers/service.js";
import { UmaDirectory } from "./areas/uma/directory.js";
import { VerificationService } from "./areas/verifications/service.js";
import { SandboxClockService } from "./areas/sandbox-clock/service.js";
import { SandboxPlatformService } from "./areas/sandbox-platforms/service.js";
import { JobHandlers } from "./jobs/registry.js";
import { defaultJobWorkerOptions, JobWorker } from "./jobs/worker.js";
import { CredentialService } from "./areas/auth/credentials.js";
import { LoginService } from "./areas/auth/login.js";
import { OidcVerifier } from "./areas/auth/oidc.js";
import { PasskeyVerifier } from "./areas/auth/passkey.js";
import { BeneficiaryTrustService } from "./areas/sca/beneficiary-trust.js";
import { ScaPasskeys } from "./areas/sca/passkeys.js";
import { ScaService } from "./areas/sca/service.js";
import { SessionService } from "./areas/auth/sessions.js";
import { DelegatedKeyService } from "./areas/auth/delegated-keys.js";
import { WalletService } from "./areas/internal-accounts/wallet-service.js";
import { SignedRequests } from "./signing/signed-requests.js";
import { WebhookService } from "./areas/webhooks/service.js";
import { systemClock, type Clock } from "./clock.js";
import {
  API_BASE_PATH,
  ConfigError,
  defaultPasskeyOrigins,
  type AuthConfig,
  type Config,
} from "./config.js";
import { parseDatabaseUrl } from "./db/client.js";
import { openSqlDriver } from "./db/sql.js";
import { inlineSqlRunner, SqliteWriterThread } from "./db/sql-runner.js";
import { migrate } from "./db/migrate.js";
import { Database } from "./db/database.js";
import { WebhookDispatcher } from "./events/dispatcher.js";
import { OutboxStore } from "./events/outbox-store.js";
import { apiHandlers } from "./api-handlers.js";
import { ApiTokenService } from "./areas/api-tokens/service.js";
import { createApp } from "./http/app.js";
import { RequestLog } from "./areas/sandbox-logs/request-log.js";
import type { ApiAnswer } from "./http/answer-observer.js";
import { expressServer } from "./http/express-server.js";
import type { Services } from "./http/context.js";
import { defaultIdempotencyOptions, IdempotencyStore } from "./http/idempotency.js";
import { RequestDrain } from "./http/request-drain.js";
import { createLogger, type Logger } from "./logger.js";
import { ApiTokenVerifier } from "./platform/api-tokens.js";
import { bootstrapPlatform, type BootstrapResult } from "./platform/bootstrap.js";
import { PlatformClocks } from "./platform/platform-clock.js";

/** Listens, or says which setting stops it (a port in use, an address not of this machine). */
async function listen(app: Express, port: number, host: string): Promise<Server> {
  const server = expressServer(app);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "EADDRINUSE") {
      throw new ConfigError(
        "PORT",
        String(port),
        `already in use on ${host}; choose another, or 0 for a free one`,
      );
    }
    if (code === "EACCES") {
      throw new ConfigError(
        "PORT",
        String(port),
        `this process may not listen on it (EACCES); use a port above 1023`,
      );
    }
    if (
      code === "EADDRNOTAVAIL" ||
      code === "ENOTFOUND" ||
      code === "EAI_AGAIN" ||
      code === "EINVAL"
    ) {
      throw new ConfigError(
        "HOST",
        host,
        `cannot listen there (${code}); use an address of this machine such as 127.0.0.1, or 0.0.0.0 for all`,
      );
    }
    throw err;
  }
  return server;
}

/** The demo page on the allowed origin whose host is the RP ID, if any; else on `origin`. */
function passkeyDemoUrl(origin: string, auth: AuthConfig): string {
  const onRpId = auth.passkeyOrigins.find(
    (o) => URL.canParse(o) && new URL(o).hostname === auth.passkeyRpId,
  );
  return `${onRpId ?? origin}${PASSKEY_DEMO_PATH}`;
}

function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

export interface RunningServer {
  /** e.g. http://127.0.0.1:3000 */
  origin: string;
  /** origin + the version segment: what clients use as their base URL. */
  baseUrl: string;
  /** The passkey demo page, on an origin whose host is the passkey RP ID when the served one is not. */
  passkeyDemoUrl: string;
  bootstrap: BootstrapResult;
  /** The data access every area uses (db/database.ts). */
  data: Database;
  log: Logger;
  jobs: JobWorker;
  /**
   * Stops taking requests, lets those in flight finish, then stops the
   * workers and closes the databases, in that order.
   */
  close(): Promise<void>;
  /** The step a close under way is waiting for; undefined when none is. */
  waitingFor(): string | undefined;
}

export interface StartOptions {
  clock?: Clock;
  log?: Logger;
  /** Extra job handlers (tests use this to exercise the worker itself). */
  registerJobs?: (handlers: JobHandlers) => void;
  /** Test seam: runs after an Idempotency-Key is claimed, before its operation. */
  afterIdempotencyClaim?: (key: string) => Promise<void>;
  /** Test seam: sees every answer of the versioned API once it is sent. */
  observeAnswers?: (answer: ApiAnswer) => void;
}

export async function startServer(
  config: Config,
  options: StartOptions = {},
): Promise<RunningServer> {
  const log = options.log ?? createLogger(config.logLevel);
  const clock = options.clock ?? systemClock;
  const target = parseDatabaseUrl(config.databaseUrl);
  const applied = await migrate(target);
  // Debug: the person starting the sandbox wants the banner, not migration names.
  if (applied.length > 0) log.debug({ applied, provider: target.provider }, "database migrated");

  const sql = openSqlDriver(target);
  const writer =
    target.provider === "sqlite" && config.sqliteWriterThread
      ? new SqliteWriterThread(target.location, (err) =>
          log.error({ err }, "SQLite checkpoint thread failed"),
        )
      : inlineSqlRunner(sql);
  const data = new Database(sql, writer);
  const bootstrap = await bootstrapPlatform(data, target.provider, clock, config, createPlatform);

  const services: Services = { data, clock, log };
  const clocks = new PlatformClocks(data, clock);
  const jobHandlers = new JobHandlers();
  options.registerJobs?.(jobHandlers);
  const jobs = new JobWorker(data, clock, clocks, jobHandlers, log.child({ component: "jobs" }), {
    ...defaultJobWorkerOptions,
    pollMs: config.jobPollMs,
    retryBaseMs: config.jobRetryBaseMs,
  });

  // Links the server hands out need its origin, known once it listens.
  let origin = config.publicBaseUrl?.replace(/\/+$/, "") ?? "";
  // The services share this one object: the passkey origins default to the
  // served origin, known once the server listens.
  const auth: AuthConfig = { ...config.auth, passkeyOrigins: [...config.auth.passkeyOrigins] };
  const signing = new SignedRequests(services, auth);
  const customers = new CustomerService(services, signing, () => `${origin}${API_BASE_PATH}`);
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
  const dispatcher = new WebhookDispatcher({
    store: new OutboxStore(writer),
    log,
    config: config.webhooks,
    clock,
  });
  const webhooks = new WebhookService(
    services,
    () => dispatcher.nudge(),
    (url, payload, key) => dispatcher.send(url, payload, key),
  );
  const idempotency = new IdempotencyStore(data, clock, {
    ...defaultIdempotencyOptions,
    ...(options.afterIdempotencyClaim ? { afterClaim: options.afterIdempotencyClaim } : {}),
  });
  const verifications = new VerificationService(services, customers);
  const externalAccounts = new ExternalAccountService(services, customers);
  const sca = new ScaService(services, customers, new ScaPasskeys(auth));
  const beneficiaryTrust = new BeneficiaryTrustService(services, customers, externalAccounts);
  const ownership = new OwnershipVerification(
    services,
    externalAccounts,
    () => `${origin}${API_BASE_PATH}`,
  );
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
  const kycLinks = new KycLinkService(services, customers, clocks, () => origin);
  const documents = new DocumentService(services, customers, beneficialOwners);
  quotePayments.registerJobs(jobHandlers);
  umaReceive.registerJobs(jobHandlers);

  const cards = new CardService(services, customers, clocks, () => origin);
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

  const requestLog = new RequestLog();
  const app = createApp({
    log,
    requestLog,
    ...(options.observeAnswers ? { observeAnswers: options.observeAnswers } : {}),
    tokens: new ApiTokenVerifier(data),
    agentTokens: agents,
    clocks,
    validateResponses: config.validateResponses,
    apiBaseUrl: () => `${origin}${API_BASE_PATH}`,
    operations: apiHandlers({
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
      requestLog,
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
    }),
    pages: [
      revealPageRoutes(cards, log),
      kycPageRoutes(kycLinks, log),
      passkeyDemoRoutes(auth.passkeyRpId),
    ],
    // A read of a table the sandbox needs: answers only when the database is
    // reachable and migrated. Bounded, so a hung connection is reported too.
    checkHealth: async () => {
      await withTimeout(
        sql.one(`SELECT "id" FROM "Platform" LIMIT 1`, []),
        2_000,
        "no answer in 2 s",
      );
    },
    logPath: (path) => withoutDeviceCode(withoutKycLinkToken(withoutRevealToken(path))),
  });

  const server = await listen(app, config.port, config.host);
  const requests = new RequestDrain(server);
  jobs.start();
  const { port } = server.address() as AddressInfo;
  const host = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
  origin ||= `http://${host}:${port}`;
  if (auth.passkeyOrigins.length === 0) auth.passkeyOrigins.push(...defaultPasskeyOrigins(origin));
  dispatcher.start();
  let stopStep: string | undefined;

  return {
    origin,
    baseUrl: `${origin}${API_BASE_PATH}`,
    passkeyDemoUrl: passkeyDemoUrl(origin, auth),
    bootstrap,
    data,
    log,
    jobs,
    waitingFor: () => (stopStep === "requests" ? requests.describe() : stopStep),
    async close() {
      const step = async (name: string, work: () => Promise<unknown>) => {
        stopStep = name;
        await work();
      };
      // Requests first: their handlers may still be writing.
      await step("requests", () => requests.close());
      await step("the job worker's current poll", () => jobs.stop());
      // Before the database goes: interrupted deliveries are recorded.
      await step("webhook deliveries", () => dispatcher.stop());
      // Transactions already handed to the writer finish before it stops.
      await step("the SQL writer", () => writer.close());
      await step("the SQL driver", () => sql.close());
      stopStep = undefined;
    },
  };
}
