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
  /** Job worker poll interval and first retry delay. */
  jobPollMs: number;
  jobRetryBaseMs: number;
}

export const API_VERSION = "2025-10-13";
export const API_BASE_PATH = `/${API_VERSION}`;
export const DEFAULT_DATABASE_URL = "file:./data/sandbox.db";

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0)
    throw new Error(`${name} must be a positive integer, got ${raw}`);
  return value;
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
    jobPollMs: positiveInt(env, "JOB_POLL_MS", 250),
    jobRetryBaseMs: positiveInt(env, "JOB_RETRY_BASE_MS", 1000),
  };
}
