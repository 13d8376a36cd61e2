import type { Schemas } from "@payments-sandbox/client";
import { ok, usageError, type CommandContext } from "../context.js";

type Entry = Schemas["SandboxRequestLogEntry"];

/** How often `logs tail` asks for new requests. */
const POLL_MS = 500;
/** The most requests one poll fetches (the log keeps 1,000 per platform). */
const PAGE = 1000;

export interface LogFilters {
  /** Statuses: exact ("404") or a class ("4xx"), any of several. */
  status?: string[];
  /** Methods, any of several (case-insensitive). */
  method?: string[];
  /** A piece of the path ("/customers"). */
  path?: string;
  /** Error codes, any of several. */
  errorCode?: string[];
}

/** "400,5xx" → a test of a status; a usage error for anything else. */
function statusTest(values: readonly string[]): (status: number) => boolean {
  const tests = values.map((value) => {
    if (/^[1-5]\d\d$/.test(value)) return (status: number) => status === Number(value);
    if (/^[1-5]xx$/i.test(value))
      return (status: number) => Math.floor(status / 100) === Number(value[0]);
    throw usageError(`--status "${value}" is not a status: use e.g. 404, 4xx or 400,5xx`);
  });
  return (status) => tests.some((test) => test(status));
}

/** The filters as one test; unknown statuses are usage errors before anything runs. */
export function matcher(filters: LogFilters): (entry: Entry) => boolean {
  const status = filters.status ? statusTest(filters.status) : () => true;
  const methods = filters.method?.map((m) => m.toUpperCase());
  const codes = filters.errorCode?.map((c) => c.toUpperCase());
  return (entry) =>
    status(entry.status) &&
    (methods === undefined || methods.includes(entry.method)) &&
    (filters.path === undefined || entry.path.includes(filters.path)) &&
    (codes === undefined || (entry.error !== undefined && codes.includes(entry.error.code)));
}

function describe(ctx: CommandContext, entry: Entry): string {
  const { out } = ctx;
  const status = entry.status >= 400 ? out.bad(String(entry.status)) : out.ok(String(entry.status));
  const error = entry.error
    ? ` ${out.bad(entry.error.code)} ${entry.error.message}${entry.error.reason ? ` (${entry.error.reason})` : ""}`
    : "";
  return `${entry.time}  ${entry.method.padEnd(6)} ${entry.path}  ${status}${error}  ${out.dim(`${entry.latencyMs} ms  ${entry.requestId}`)}`;
}

/**
 * `logs tail`: the platform's API requests as they happen (from the
 * sandbox's request log, GET /sandbox/logs/requests), filtered, until
 * Ctrl-C. With --json, one JSON line per request.
 */
export async function tailLogs(ctx: CommandContext, filters: LogFilters): Promise<void> {
  const { api, out } = ctx;
  const wanted = matcher(filters);
  const first = ok(
    "GET /sandbox/logs/requests",
    await api.GET("/sandbox/logs/requests", { params: { query: { limit: 1 } } }),
  );
  let after = first.lastSequence;
  let stopped = false;
  void ctx.stopped.then(() => (stopped = true));
  out.step(`Tailing the platform's API requests (Ctrl-C to stop)...`);
  while (!stopped) {
    const page = ok(
      "GET /sandbox/logs/requests",
      await api.GET("/sandbox/logs/requests", { params: { query: { after, limit: PAGE } } }),
    );
    const skipped = (page.data[0]?.sequence ?? after + 1) - after - 1;
    if (skipped > 0)
      out.warn(out.dim(`(${skipped} request(s) left the log before they were read)`));
    for (const entry of page.data) {
      if (!wanted(entry)) continue;
      if (out.json) out.jsonLine(entry);
      else out.line(describe(ctx, entry));
    }
    after = page.data.at(-1)?.sequence ?? after;
    if (page.data.length < PAGE) {
      await Promise.race([new Promise((resolve) => setTimeout(resolve, POLL_MS)), ctx.stopped]);
    }
  }
}
