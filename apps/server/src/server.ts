import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { CardService } from "./areas/cards/service.js";
import { cardRoutes } from "./areas/cards/routes.js";
import { revealPageRoutes, withoutRevealToken } from "./areas/cards/reveal-page.js";
import { registerCardIssuanceJob } from "./areas/cards/issuance.js";
import { CardTransactionService } from "./areas/card-transactions/service.js";
import { cardSimulationRoutes, cardTransactionRoutes } from "./areas/card-transactions/routes.js";
import { CustomerService } from "./areas/customers/service.js";
import { customerRoutes } from "./areas/customers/routes.js";
import { InternalAccountService } from "./areas/internal-accounts/service.js";
import { internalAccountRoutes } from "./areas/internal-accounts/routes.js";
import { sandboxRoutes } from "./areas/sandbox/routes.js";
import { SandboxClockService } from "./areas/sandbox-clock/service.js";
import { sandboxClockRoutes } from "./areas/sandbox-clock/routes.js";
import { JobHandlers } from "./jobs/registry.js";
import { defaultJobWorkerOptions, JobWorker } from "./jobs/worker.js";
import { systemClock, type Clock } from "./clock.js";
import { API_BASE_PATH, type Config } from "./config.js";
import { createDb, parseDatabaseUrl, type Db } from "./db/client.js";
import { openSqlDriver } from "./db/sql.js";
import { migrate } from "./db/migrate.js";
import { createApp } from "./http/app.js";
import type { Services } from "./http/context.js";
import { createLogger, type Logger } from "./logger.js";
import { ApiTokenVerifier } from "./platform/api-tokens.js";
import { bootstrapPlatform, type BootstrapResult } from "./platform/bootstrap.js";
import { PlatformClocks } from "./platform/platform-clock.js";

export interface RunningServer {
  /** e.g. http://127.0.0.1:3000 */
  origin: string;
  /** origin + the version segment: what clients use as their base URL. */
  baseUrl: string;
  bootstrap: BootstrapResult;
  db: Db;
  log: Logger;
  jobs: JobWorker;
  close(): Promise<void>;
}

export interface StartOptions {
  clock?: Clock;
  log?: Logger;
  /** Extra job handlers (tests use this to exercise the worker itself). */
  registerJobs?: (handlers: JobHandlers) => void;
}

export async function startServer(
  config: Config,
  options: StartOptions = {},
): Promise<RunningServer> {
  const log = options.log ?? createLogger(config.logLevel);
  const clock = options.clock ?? systemClock;
  const target = parseDatabaseUrl(config.databaseUrl);
  const applied = await migrate(target);
  if (applied.length > 0) log.info({ applied, provider: target.provider }, "database migrated");

  const db = createDb(target);
  const sql = openSqlDriver(target);
  const bootstrap = await bootstrapPlatform(db, clock, config);

  const services: Services = { db, clock, log };
  const clocks = new PlatformClocks(db, clock, sql);
  const jobHandlers = new JobHandlers();
  options.registerJobs?.(jobHandlers);
  const jobs = new JobWorker(db, clock, clocks, jobHandlers, log.child({ component: "jobs" }), {
    ...defaultJobWorkerOptions,
    pollMs: config.jobPollMs,
    retryBaseMs: config.jobRetryBaseMs,
  });

  const customers = new CustomerService(services);
  const accounts = new InternalAccountService(services, customers);
  const sandboxClock = new SandboxClockService(services, jobs);
  // Links the server hands out need its origin, known once it listens.
  let origin = config.publicBaseUrl?.replace(/\/+$/, "") ?? "";
  const cards = new CardService(services, customers, clocks, () => origin);
  const cardTransactions = new CardTransactionService(services, cards, sql);
  registerCardIssuanceJob(jobHandlers, db);
  cardTransactions.registerJobs(jobHandlers);

  const app = createApp({
    log,
    tokens: new ApiTokenVerifier(db),
    clocks,
    validateResponses: config.validateResponses,
    routers: [
      customerRoutes(customers),
      internalAccountRoutes(accounts),
      sandboxRoutes(accounts),
      sandboxClockRoutes(sandboxClock),
      cardRoutes(cards),
      cardTransactionRoutes(cardTransactions),
      cardSimulationRoutes(cardTransactions),
    ],
    pages: [revealPageRoutes(cards, log)],
    logPath: withoutRevealToken,
  });

  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(config.port, config.host, () => resolve(s));
    s.once("error", reject);
  });
  jobs.start();
  const { port } = server.address() as AddressInfo;
  const host = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
  origin ||= `http://${host}:${port}`;

  return {
    origin,
    baseUrl: `${origin}${API_BASE_PATH}`,
    bootstrap,
    db,
    log,
    jobs,
    async close() {
      await jobs.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await db.$disconnect();
      await sql.close();
    },
  };
}
