import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes, randomUUID } from "node:crypto";
import pg from "pg";
import { pino } from "pino";
import { createClient, type SandboxClient } from "@payments-sandbox/client";
import { startServer, type RunningServer, type StartOptions } from "../src/server.js";
import { loadConfig } from "../src/config.js";
import type { Clock } from "../src/clock.js";
import { createApiToken, generateCredentials } from "../src/platform/api-tokens.js";
import { createPlatform } from "../src/areas/platform/creation.js";
import { parseDatabaseUrl, type DatabaseTarget } from "../src/db/client.js";
import { migrate } from "../src/db/migrate.js";
import type { ApiAnswer } from "../src/http/answer-observer.js";

export type DatabaseKind = "sqlite" | "postgresql";

/** Databases the integration suite runs on: both unless TEST_DATABASES narrows it. */
export const databases: DatabaseKind[] = (process.env.TEST_DATABASES ?? "sqlite,postgresql")
  .split(",")
  .map((s) => s.trim())
  .filter((s): s is DatabaseKind => s === "sqlite" || s === "postgresql");

export const POSTGRES_URL =
  process.env.TEST_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh database with every migration applied, and its parsed target. */
export type MigratedDatabase = TestDatabase & { target: DatabaseTarget };

/** {@link freshDatabase}, migrated. */
export async function migratedDatabase(kind: DatabaseKind): Promise<MigratedDatabase> {
  const database = await freshDatabase(kind);
  const target = parseDatabaseUrl(database.url);
  await migrate(target);
  return { ...database, target };
}

/** A fresh, empty database: a temp SQLite file or a new PostgreSQL schema. */
export async function freshDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  if (kind === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "sandbox-test-"));
    return {
      url: `file:${join(dir, "sandbox.db")}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const schema = `t_${randomBytes(6).toString("hex")}`;
  return {
    url: `${POSTGRES_URL}?schema=${schema}`,
    async drop() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    },
  };
}

export interface TestSandbox {
  server: RunningServer;
  client: SandboxClient;
  credentials: { tokenId: string; secret: string };
  database: TestDatabase;
  /** A second platform on the same server, for tenancy checks. */
  otherPlatformClient(): Promise<SandboxClient>;
  /** Raw fetch against the API base URL with this platform's credentials. */
  rawFetch(path: string, init?: RequestInit & { auth?: string | null }): Promise<Response>;
  /**
   * Another server process on this sandbox's database (same platform, its own
   * token), as when several processes share one PostgreSQL database. Its
   * stop() leaves the database in place.
   */
  startAnother(options?: { env?: Record<string, string> }): Promise<TestSandbox>;
  stop(): Promise<void>;
}

export interface SandboxOptions {
  clock?: Clock;
  /** Start on an existing database (e.g. a second server sharing one). */
  databaseUrl?: string;
  /** Extra environment for loadConfig (e.g. JOB_POLL_MS). */
  env?: Record<string, string>;
  registerJobs?: StartOptions["registerJobs"];
  afterIdempotencyClaim?: StartOptions["afterIdempotencyClaim"];
  /** The server's logger (silent unless TEST_LOG_LEVEL says otherwise). */
  log?: StartOptions["log"];
  /**
   * The sandbox is sent requests that production's own contract refuses
   * (hostile input, placeholder ids and bodies): its answers are left out of
   * the production-contract check, whose promise covers only requests
   * production accepts.
   */
  hostileRequests?: true;
}

/**
 * Whether every answer is checked against production's contract too
 * (test/production-answers.ts): on unless PRODUCTION_CONTRACT_CHECK=off.
 */
export const checkingProductionContract = process.env.PRODUCTION_CONTRACT_CHECK !== "off";

/** Answers given since the last check, by every sandbox this file started. */
const answers: ApiAnswer[] = [];

/** The answers given since the last call, to check. */
export function takeAnswers(): ApiAnswer[] {
  return answers.splice(0);
}

/** The sandboxes started and not yet stopped, in this test file. */
const running = new Set<TestSandbox>();

export function runningSandboxes(): readonly TestSandbox[] {
  return [...running];
}

export async function startSandbox(
  kind: DatabaseKind,
  options: SandboxOptions = {},
): Promise<TestSandbox> {
  const database = options.databaseUrl
    ? { url: options.databaseUrl, drop: async () => undefined }
    : await freshDatabase(kind);
  const credentials = { tokenId: randomUUID(), secret: randomBytes(24).toString("base64url") };
  const config = loadConfig({
    PORT: "0",
    DATABASE_URL: database.url,
    SANDBOX_TOKEN_ID: credentials.tokenId,
    SANDBOX_TOKEN_SECRET: credentials.secret,
    LOG_LEVEL: "silent",
    VALIDATE_RESPONSES: "true",
    ...options.env,
  });
  const server = await startServer(config, {
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.registerJobs ? { registerJobs: options.registerJobs } : {}),
    ...(options.afterIdempotencyClaim
      ? { afterIdempotencyClaim: options.afterIdempotencyClaim }
      : {}),
    log: options.log ?? pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
    ...(checkingProductionContract && !options.hostileRequests
      ? { observeAnswers: (answer) => answers.push(answer) }
      : {}),
  });
  const client = createClient({ baseUrl: server.baseUrl, ...credentials });
  const basic = `Basic ${Buffer.from(`${credentials.tokenId}:${credentials.secret}`).toString("base64")}`;
  const sandbox: TestSandbox = {
    server,
    client,
    credentials,
    database,
    async otherPlatformClient() {
      const clock = { now: () => new Date() };
      const platformId = await server.data.transaction(() =>
        createPlatform(clock, "Other platform"),
      );
      const other = generateCredentials();
      await createApiToken(server.data, clock, platformId, other.tokenId, other.secret);
      return createClient({
        baseUrl: server.baseUrl,
        tokenId: other.tokenId,
        secret: other.secret,
      });
    },
    rawFetch(path, init = {}) {
      const headers = new Headers(init.headers);
      if (init.auth !== null) headers.set("Authorization", init.auth ?? basic);
      return fetch(`${server.baseUrl}${path}`, { ...init, headers });
    },
    startAnother(another = {}) {
      return startSandbox(kind, {
        databaseUrl: database.url,
        ...(options.clock ? { clock: options.clock } : {}),
        env: { ...options.env, ...another.env },
      });
    },
    async stop() {
      running.delete(sandbox);
      await server.close();
      await database.drop();
    },
  };
  running.add(sandbox);
  return sandbox;
}
