import { areaPages, areaServices, withoutPathTokens } from "./area-services.js";
import { apiHandlers } from "./api-handlers.js";
import { createPlatform } from "./areas/platform/creation.js";
import { systemClock, type Clock } from "./clock.js";
import { sharedAuthConfig, defaultPasskeyOriginsOnceServed, type Config } from "./config.js";
import { parseDatabaseUrl, type Provider } from "./db/client.js";
import { Database } from "./db/database.js";
import { migrate } from "./db/migrate.js";
import { openSqlDriver, type SqlDriver } from "./db/sql.js";
import { inlineSqlRunner, SqliteWriterThread, type SqlRunner } from "./db/sql-runner.js";
import { WebhookDispatcher } from "./events/dispatcher.js";
import { OutboxStore } from "./events/outbox-store.js";
import type { ApiAnswer } from "./http/answer-observer.js";
import { createApp } from "./http/app.js";
import type { Services } from "./http/context.js";
import { defaultIdempotencyOptions, IdempotencyStore } from "./http/idempotency.js";
import { listen } from "./http/listen.js";
import { passkeyDemoRoutes, passkeyDemoUrl } from "./http/passkey-demo.js";
import { RequestDrain } from "./http/request-drain.js";
import { ServedOrigin } from "./http/served-origin.js";
import { JobHandlers } from "./jobs/registry.js";
import { JobWorker, jobWorkerOptionsOf } from "./jobs/worker.js";
import { createLogger, type Logger } from "./logger.js";
import { ApiTokenVerifier } from "./platform/api-tokens.js";
import { bootstrapPlatform, type BootstrapResult } from "./platform/bootstrap.js";
import { PlatformClocks } from "./platform/platform-clock.js";

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

/** The data path the server runs on, migrated and open. */
interface Storage {
  provider: Provider;
  sql: SqlDriver;
  /** The SQLite writer thread, or the driver itself (inline). */
  writer: SqlRunner;
  data: Database;
}

/**
 * Applies the migrations and opens the database: the driver, the runner of
 * write transactions (SQLite's writer thread when configured), and the one
 * Database every area reads and writes through.
 */
async function openStorage(config: Config, log: Logger): Promise<Storage> {
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
  return { provider: target.provider, sql, writer, data: new Database(sql, writer) };
}

/**
 * A read of a table the sandbox needs: answers only when the database is
 * reachable and migrated. Bounded, so a hung connection is reported too.
 */
async function checkDatabase(sql: SqlDriver): Promise<void> {
  await withTimeout(sql.one(`SELECT "id" FROM "Platform" LIMIT 1`, []), 2_000, "no answer in 2 s");
}

function withTimeout<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Starts the sandbox: the composition root. Each part is made after the
 * parts it uses (the areas' own wiring is area-services.ts); the server
 * listens last, then the background work starts. `close` stops it all,
 * requests first and the databases last.
 */
export async function startServer(
  config: Config,
  options: StartOptions = {},
): Promise<RunningServer> {
  const log = options.log ?? createLogger(config.logLevel);
  const clock = options.clock ?? systemClock;
  const { provider, sql, writer, data } = await openStorage(config, log);
  const bootstrap = await bootstrapPlatform(data, provider, clock, config, createPlatform);

  const services: Services = { data, clock, log };
  const clocks = new PlatformClocks(data, clock);
  const jobHandlers = new JobHandlers();
  options.registerJobs?.(jobHandlers);
  const jobs = new JobWorker(
    data,
    clock,
    clocks,
    jobHandlers,
    log.child({ component: "jobs" }),
    jobWorkerOptionsOf(config),
  );
  // Links the server hands out need its origin, known once it listens.
  const origin = new ServedOrigin(config.publicBaseUrl);
  // The passkey origins default to the served origin, known once it listens.
  const auth = sharedAuthConfig(config.auth);
  const dispatcher = new WebhookDispatcher({
    store: new OutboxStore(writer),
    log,
    config: config.webhooks,
    clock,
  });
  const idempotency = new IdempotencyStore(data, clock, {
    ...defaultIdempotencyOptions,
    ...(options.afterIdempotencyClaim ? { afterClaim: options.afterIdempotencyClaim } : {}),
  });
  const areas = areaServices({
    services,
    clocks,
    jobs,
    jobHandlers,
    auth,
    origin,
    dispatcher,
    idempotency,
  });

  const app = createApp({
    log,
    requestLog: areas.requestLog,
    ...(options.observeAnswers ? { observeAnswers: options.observeAnswers } : {}),
    tokens: new ApiTokenVerifier(data),
    agentTokens: areas.agents,
    clocks,
    validateResponses: config.validateResponses,
    apiBaseUrl: origin.apiBaseUrl,
    operations: apiHandlers(areas),
    pages: [...areaPages(areas, log), passkeyDemoRoutes(auth.passkeyRpId)],
    checkHealth: () => checkDatabase(sql),
    logPath: withoutPathTokens,
  });

  const server = await listen(app, config.port, config.host);
  const requests = new RequestDrain(server);
  jobs.start();
  origin.listening(server, config.host);
  defaultPasskeyOriginsOnceServed(auth, origin.origin());
  dispatcher.start();
  let stopStep: string | undefined;

  return {
    origin: origin.origin(),
    baseUrl: origin.apiBaseUrl(),
    passkeyDemoUrl: passkeyDemoUrl(origin.origin(), auth),
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
