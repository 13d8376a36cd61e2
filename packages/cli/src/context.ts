import { createClient, type SandboxClient } from "@payments-sandbox/client";
import type { Output } from "./output.js";

/** Where the sandbox is when neither --base-url nor SANDBOX_BASE_URL says. */
export const DEFAULT_BASE_URL = "http://localhost:3000/2025-10-13";

/** The environment variables the CLI reads (flags take precedence). */
export const ENV = {
  baseUrl: "SANDBOX_BASE_URL",
  tokenId: "SANDBOX_TOKEN_ID",
  tokenSecret: "SANDBOX_TOKEN_SECRET",
} as const;

/** A failure the user can act on: printed as one line, exit code 1 (2 for usage). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2 = 1,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(message, 2);

export interface Connection {
  baseUrl: string;
  tokenId: string;
  secret: string;
}

/** What every command gets: its output, and the sandbox it talks to. */
export interface CommandContext {
  out: Output;
  connection: Connection;
  api: SandboxClient;
  /** Resolves when the user asks to stop (Ctrl-C, SIGTERM): for long-running commands. */
  stopped: Promise<void>;
}

export function connect(connection: Connection): SandboxClient {
  return createClient(connection);
}

interface ApiResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of a successful call; otherwise a CliError naming the call, status and error code. */
export function ok<T>(what: string, result: ApiResult<T>): T {
  if (result.response.ok && result.data !== undefined) return result.data;
  throw apiFailure(what, result);
}

/** A call whose success has no body (204). */
export function done(what: string, result: ApiResult<unknown>): void {
  if (!result.response.ok) throw apiFailure(what, result);
}

function apiFailure(what: string, result: ApiResult<unknown>): CliError {
  const error = result.error as
    { code?: string; message?: string; details?: { permission?: unknown } } | undefined;
  const detail = error?.code ? `${error.code}: ${error.message ?? ""}` : JSON.stringify(error);
  // A token refused for a permission it lacks has the right credentials.
  const permission = error?.details?.permission;
  const hint =
    typeof permission === "string"
      ? ` (use a token with the ${permission} permission)`
      : result.response.status === 401
        ? ` (check --token-id/--token-secret or ${ENV.tokenId}/${ENV.tokenSecret})`
        : "";
  return new CliError(`${what} failed with ${result.response.status} ${detail}${hint}`);
}

/**
 * What really went wrong with a fetch: undici reports every network failure
 * as "fetch failed" and keeps the reason (connection refused, DNS, reset)
 * in `cause`, an AggregateError when several addresses were tried.
 */
export function networkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === "TimeoutError") return `no answer in time (${error.message})`;
  const cause = (error as { cause?: unknown }).cause;
  if (!(cause instanceof Error)) return error.message;
  if (cause instanceof AggregateError && cause.message === "") {
    const first = cause.errors.find((e): e is Error => e instanceof Error);
    if (first) return first.message;
  }
  const code = (cause as { code?: string }).code;
  return cause.message !== "" ? cause.message : (code ?? error.message);
}

/**
 * A URL as people type it: "localhost:8080/webhooks" means
 * http://localhost:8080/webhooks. Anything that is then not an http(s) URL
 * is a usage error naming the option.
 */
export function httpUrl(option: string, text: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw usageError(`--${option} "${text}" is not a URL (e.g. http://localhost:8080/webhooks)`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw usageError(`--${option} must be an http:// or https:// URL, not ${url.protocol}//`);
  }
  return url.href;
}
