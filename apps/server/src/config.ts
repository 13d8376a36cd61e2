// Configuration comes only from the environment, with defaults that make
// `npm run sandbox` work on a fresh clone. Documented in the README's table.
export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  publicBaseUrl: string | undefined;
  sandboxTokenId: string | undefined;
  sandboxTokenSecret: string | undefined;
  logLevel: string;
  validateResponses: boolean;
  /** SQLite: run the hot-path write transactions on a thread of their own (db/sql-runner.ts). */
  sqliteWriterThread: boolean;
  /** Job worker poll interval and first retry delay. */
  jobPollMs: number;
  jobRetryBaseMs: number;
  /** How long a stop may take before the process gives up waiting and exits non-zero. */
  shutdownTimeoutMs: number;
  auth: AuthConfig;
  webhooks: WebhookConfig;
}

/** Webhook delivery tuning (events/dispatcher.ts). */
export interface WebhookConfig {
  /** How long one delivery may take before it counts as failed. */
  timeoutMs: number;
  /** First retry delay; each further retry doubles it (with jitter). */
  retryBaseMs: number;
  /** Upper bound of one retry delay. */
  retryMaxDelayMs: number;
  /** Retries continue until this long after the first attempt, then FAILED. */
  maxAgeMs: number;
  /** How often each process looks for due events. */
  pollMs: number;
  /** Deliveries in flight per process. */
  concurrency: number;
  /** Deliveries in flight per process for one platform, so one slow receiver cannot take every slot. */
  platformConcurrency: number;
  /** How long a claim lasts; another process may take the event over after it. */
  leaseMs: number;
}

/** An issuer whose tokens are signature-checked: a key-set URL or an inline JWKS. */
export type OidcKeySet = { url: string } | { jwks: { keys: Record<string, unknown>[] } };

export interface AuthConfig {
  /** Lifetime of an AuthSession. */
  sessionTtlSeconds: number;
  /** Lifetime of a signed-retry challenge, a passkey challenge and an OTP code. */
  challengeTtlSeconds: number;
  /** WebAuthn relying party. */
  passkeyRpId: string;
  /**
   * Allowed WebAuthn origins. Empty when PASSKEY_ORIGIN is unset: the server
   * then fills in the origin it serves once it listens (see startServer).
   */
  passkeyOrigins: string[];
  /** Accepted `iss` values of OIDC tokens. */
  oidcIssuers: string[];
  /** Issuers in production mode: their tokens' signatures are verified. */
  oidcKeySets: Record<string, OidcKeySet>;
  /** Whether the legacy sandbox shortcut values are accepted. */
  legacyShortcuts: boolean;
}

export const DEFAULT_OIDC_ISSUERS = [
  "https://accounts.google.com",
  "https://appleid.apple.com",
  // For tests and demos without an identity provider.
  "https://oidc.sandbox.localhost",
];

/**
 * A setting the sandbox cannot run with. main.ts prints its message as one
 * line and exits with code 1: the variable, the value (unless it is a
 * secret) and what is allowed.
 */
export class ConfigError extends Error {
  constructor(variable: string, value: string | undefined, problem: string) {
    super(`${variable}${value === undefined ? "" : `=${JSON.stringify(value)}`}: ${problem}`);
    this.name = "ConfigError";
  }
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

export const API_VERSION = "2025-10-13";
export const API_BASE_PATH = `/${API_VERSION}`;
export const DEFAULT_DATABASE_URL = "file:./data/sandbox.db";

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new ConfigError(name, raw, "must be a whole number greater than 0");
  }
  return value;
}

function positiveNumber(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new ConfigError(name, raw, "must be a number greater than 0");
  }
  return value;
}

export function loadWebhookConfig(env: NodeJS.ProcessEnv): WebhookConfig {
  const timeoutMs = positiveInt(env, "WEBHOOK_TIMEOUT_MS", 10_000);
  const retryBaseMs = positiveInt(env, "WEBHOOK_RETRY_BASE_MS", 1_000);
  // Requests in flight bound the rate: a receiver answering in 50 ms takes
  // 100 at a time to receive 2,000 events a second (the platform's share is
  // an eighth, 128).
  const concurrency = positiveInt(env, "WEBHOOK_CONCURRENCY", 1024);
  // The lease must outlive the slowest attempt (the timeout) with room for
  // signing and recording it, or a second process could send it again.
  const leaseMs = positiveInt(env, "WEBHOOK_LEASE_MS", timeoutMs + 30_000);
  if (leaseMs <= timeoutMs) {
    throw new ConfigError(
      "WEBHOOK_LEASE_MS",
      String(leaseMs),
      `must be greater than WEBHOOK_TIMEOUT_MS (${timeoutMs})`,
    );
  }
  return {
    timeoutMs,
    retryBaseMs,
    retryMaxDelayMs: Math.max(
      retryBaseMs,
      positiveInt(env, "WEBHOOK_RETRY_MAX_DELAY_MS", 3_600_000),
    ),
    maxAgeMs: Math.round(positiveNumber(env, "WEBHOOK_MAX_AGE_HOURS", 24) * 3_600_000),
    pollMs: positiveInt(env, "WEBHOOK_POLL_MS", 200),
    concurrency,
    platformConcurrency: Math.min(
      concurrency,
      positiveInt(env, "WEBHOOK_PLATFORM_CONCURRENCY", Math.max(1, Math.floor(concurrency / 8))),
    ),
    leaseMs,
  };
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = raw.toLowerCase();
  if (value === "true" || value === "1") return true;
  if (value === "false" || value === "0") return false;
  throw new ConfigError(name, raw, "must be true, false, 1 or 0");
}

function list(value: string | undefined, fallback: string[]): string[] {
  if (value === undefined || value.trim() === "") return fallback;
  return value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/**
 * OIDC_JWKS: a JSON object from issuer to its key set, given either as the
 * key-set URL (a string) or inline as a JWKS object (`{"keys": [...]}`).
 */
function oidcKeySets(raw: string | undefined): Record<string, OidcKeySet> {
  if (raw === undefined || raw.trim() === "") return {};
  const shape = "must be a JSON object from issuer to key-set URL or JWKS";
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError("OIDC_JWKS", raw, shape);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError("OIDC_JWKS", raw, shape);
  }
  const sets: Record<string, OidcKeySet> = {};
  for (const [issuer, value] of Object.entries(parsed)) {
    if (typeof value === "string") {
      const url = URL.canParse(value) ? new URL(value) : undefined;
      if (url?.protocol !== "https:" && url?.protocol !== "http:") {
        throw new ConfigError(
          "OIDC_JWKS",
          raw,
          `the key-set URL of ${issuer} must be an http(s) URL`,
        );
      }
      sets[issuer] = { url: url.toString() };
    } else if (
      typeof value === "object" &&
      value !== null &&
      Array.isArray((value as { keys?: unknown }).keys)
    ) {
      sets[issuer] = { jwks: value as { keys: Record<string, unknown>[] } };
    } else {
      throw new ConfigError(
        "OIDC_JWKS",
        raw,
        `${issuer} needs a key-set URL or a JWKS object with "keys"`,
      );
    }
  }
  return sets;
}

/**
 * The relying-party id browsers accept for the sandbox's own pages: the host
 * of PUBLIC_BASE_URL when it is a domain name, else `localhost` (WebAuthn
 * takes no IP address as an RP ID).
 */
function defaultRpId(publicBaseUrl: string | undefined): string {
  let host: string;
  try {
    host = publicBaseUrl ? new URL(publicBaseUrl).hostname : "";
  } catch {
    return "localhost";
  }
  return /^[a-z0-9.-]*[a-z-][a-z0-9.-]*$/i.test(host) && !host.includes(":") ? host : "localhost";
}

/**
 * The WebAuthn origins a sandbox serving `origin` accepts when PASSKEY_ORIGIN
 * is unset: that origin, and on a loopback address also `localhost` on the
 * same port, where a browser can use the `localhost` RP ID.
 */
export function defaultPasskeyOrigins(origin: string): string[] {
  const url = new URL(origin);
  const origins = [url.origin];
  const loopback = ["127.0.0.1", "[::1]", "localhost"].includes(url.hostname);
  const local = `${url.protocol}//localhost${url.port ? `:${url.port}` : ""}`;
  if (loopback && !origins.includes(local)) origins.push(local);
  return origins;
}

/**
 * The auth settings the services share, as one object of their own: with
 * PASSKEY_ORIGIN unset, its passkey origins are filled in once the server
 * listens ({@link defaultPasskeyOriginsOnceServed}).
 */
export function sharedAuthConfig(auth: AuthConfig): AuthConfig {
  return { ...auth, passkeyOrigins: [...auth.passkeyOrigins] };
}

/** With PASSKEY_ORIGIN unset, the passkey origins of the served `origin`, once it is known. */
export function defaultPasskeyOriginsOnceServed(auth: AuthConfig, origin: string): void {
  if (auth.passkeyOrigins.length === 0) auth.passkeyOrigins.push(...defaultPasskeyOrigins(origin));
}

export function loadAuthConfig(env: NodeJS.ProcessEnv = process.env): AuthConfig {
  const keySets = oidcKeySets(env.OIDC_JWKS);
  const issuers = list(env.OIDC_ISSUERS, DEFAULT_OIDC_ISSUERS);
  // An issuer with a key set is supported even when OIDC_ISSUERS leaves it out.
  for (const issuer of Object.keys(keySets)) if (!issuers.includes(issuer)) issuers.push(issuer);
  return {
    sessionTtlSeconds: positiveInt(env, "AUTH_SESSION_TTL_SECONDS", 15 * 60),
    challengeTtlSeconds: positiveInt(env, "AUTH_CHALLENGE_TTL_SECONDS", 5 * 60),
    passkeyRpId: env.PASSKEY_RP_ID || defaultRpId(env.PUBLIC_BASE_URL),
    passkeyOrigins: list(env.PASSKEY_ORIGIN, []),
    oidcIssuers: issuers,
    oidcKeySets: keySets,
    legacyShortcuts: bool(env, "SANDBOX_LEGACY_SHORTCUTS", true),
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const rawPort = env.PORT ?? "";
  const port = rawPort === "" ? 3000 : Number(rawPort);
  if (!/^\d+$/.test(rawPort || "0") || port > 65535) {
    throw new ConfigError(
      "PORT",
      rawPort,
      "must be a whole number from 0 to 65535 (0 picks a free port)",
    );
  }
  const tokenId = env.SANDBOX_TOKEN_ID || undefined;
  const tokenSecret = env.SANDBOX_TOKEN_SECRET || undefined;
  if ((tokenId === undefined) !== (tokenSecret === undefined)) {
    throw new ConfigError(
      tokenId === undefined ? "SANDBOX_TOKEN_ID" : "SANDBOX_TOKEN_SECRET",
      undefined,
      "SANDBOX_TOKEN_ID and SANDBOX_TOKEN_SECRET must be set together",
    );
  }
  if (tokenId !== undefined && tokenId.includes(":")) {
    throw new ConfigError(
      "SANDBOX_TOKEN_ID",
      tokenId,
      "it must not contain ':' (it is the Basic auth user name)",
    );
  }
  const logLevel = env.LOG_LEVEL || "info";
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError("LOG_LEVEL", logLevel, `must be one of ${LOG_LEVELS.join(", ")}`);
  }
  return {
    port,
    host: env.HOST ?? "127.0.0.1",
    databaseUrl: env.DATABASE_URL || DEFAULT_DATABASE_URL,
    publicBaseUrl: env.PUBLIC_BASE_URL || undefined,
    sandboxTokenId: tokenId,
    sandboxTokenSecret: tokenSecret,
    logLevel,
    // Response validation catches contract drift; it costs time per response,
    // so production-like deployments may turn it off.
    validateResponses: bool(env, "VALIDATE_RESPONSES", env.NODE_ENV !== "production"),
    sqliteWriterThread: bool(env, "SQLITE_WRITER_THREAD", true),
    jobPollMs: positiveInt(env, "JOB_POLL_MS", 250),
    jobRetryBaseMs: positiveInt(env, "JOB_RETRY_BASE_MS", 1000),
    shutdownTimeoutMs: positiveInt(env, "SHUTDOWN_TIMEOUT_MS", 10_000),
    auth: loadAuthConfig(env),
    webhooks: loadWebhookConfig(env),
  };
}
