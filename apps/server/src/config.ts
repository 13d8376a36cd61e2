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

export const API_VERSION = "2025-10-13";
export const API_BASE_PATH = `/${API_VERSION}`;
export const DEFAULT_DATABASE_URL = "file:./data/sandbox.db";

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new Error(`${name} must be a positive integer, got ${raw}`);
  }
  return value;
}

function positiveNumber(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(`${name} must be a positive number, got ${raw}`);
  }
  return value;
}

export function loadWebhookConfig(env: NodeJS.ProcessEnv): WebhookConfig {
  const timeoutMs = positiveInt(env, "WEBHOOK_TIMEOUT_MS", 10_000);
  const retryBaseMs = positiveInt(env, "WEBHOOK_RETRY_BASE_MS", 1_000);
  const concurrency = positiveInt(env, "WEBHOOK_CONCURRENCY", 32);
  // The lease must outlive the slowest attempt (the timeout) with room for
  // signing and recording it, or a second process could send it again.
  const leaseMs = positiveInt(env, "WEBHOOK_LEASE_MS", timeoutMs + 30_000);
  if (leaseMs <= timeoutMs) {
    throw new Error("WEBHOOK_LEASE_MS must be greater than WEBHOOK_TIMEOUT_MS");
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

function bool(value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === "") return fallback;
  return ["1", "true", "yes", "on"].includes(value.toLowerCase());
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = Number(env.PORT ?? 3000);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be an integer between 0 and 65535, got ${env.PORT}`);
  }
  const tokenId = env.SANDBOX_TOKEN_ID || undefined;
  const tokenSecret = env.SANDBOX_TOKEN_SECRET || undefined;
  if ((tokenId === undefined) !== (tokenSecret === undefined)) {
    throw new Error("SANDBOX_TOKEN_ID and SANDBOX_TOKEN_SECRET must be set together");
  }
  if (tokenId !== undefined && tokenId.includes(":")) {
    throw new Error("SANDBOX_TOKEN_ID must not contain ':' (it is the Basic auth user name)");
  }
  return {
    port,
    host: env.HOST ?? "127.0.0.1",
    databaseUrl: env.DATABASE_URL || DEFAULT_DATABASE_URL,
    publicBaseUrl: env.PUBLIC_BASE_URL || undefined,
    sandboxTokenId: tokenId,
    sandboxTokenSecret: tokenSecret,
    logLevel: env.LOG_LEVEL ?? "info",
    // Response validation catches contract drift; it costs time per response,
    // so production-like deployments may turn it off.
    validateResponses: bool(env.VALIDATE_RESPONSES, env.NODE_ENV !== "production"),
    webhooks: loadWebhookConfig(env),
  };
}
