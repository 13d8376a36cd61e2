import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { CustomerService } from "./areas/customers/service.js";
import { customerRoutes } from "./areas/customers/routes.js";
import { InternalAccountService } from "./areas/internal-accounts/service.js";
import { internalAccountRoutes } from "./areas/internal-accounts/routes.js";
import { PlatformService } from "./areas/platform/service.js";
import { platformRoutes } from "./areas/platform/routes.js";
import { sandboxRoutes } from "./areas/sandbox/routes.js";
import { WebhookService } from "./areas/webhooks/service.js";
import { webhookRoutes } from "./areas/webhooks/routes.js";
import { systemClock, type Clock } from "./clock.js";
import { API_BASE_PATH, type Config } from "./config.js";
import { createDb, parseDatabaseUrl, type Db } from "./db/client.js";
import { migrate } from "./db/migrate.js";
import { WebhookDispatcher } from "./events/dispatcher.js";
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
  close(): Promise<void>;
}

export interface StartOptions {
  clock?: Clock;
  log?: Logger;
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
  const bootstrap = await bootstrapPlatform(db, clock, config);

  const services: Services = { db, clock, log };
  const customers = new CustomerService(services);
  const accounts = new InternalAccountService(services, customers);
  const dispatcher = new WebhookDispatcher({ db, log, config: config.webhooks, clock });
  const webhooks = new WebhookService(services, () => dispatcher.nudge());

  const app = createApp({
    log,
    tokens: new ApiTokenVerifier(db),
    clocks: new PlatformClocks(db, clock),
    validateResponses: config.validateResponses,
    routers: [
      platformRoutes(new PlatformService(services)),
      customerRoutes(customers),
      internalAccountRoutes(accounts),
      sandboxRoutes(accounts),
      webhookRoutes(webhooks),
    ],
  });

  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(config.port, config.host, () => resolve(s));
    s.once("error", reject);
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
  const origin = config.publicBaseUrl?.replace(/\/+$/, "") ?? `http://${host}:${port}`;
  dispatcher.start();

  return {
    origin,
    baseUrl: `${origin}${API_BASE_PATH}`,
    bootstrap,
    db,
    log,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      // Before the database goes: interrupted deliveries are recorded.
      await dispatcher.stop();
      await db.$disconnect();
    },
  };
}
