import type { Schemas } from "@payments-sandbox/client";
import type { RecordedRequest, RequestRecorder } from "../../http/request-recording.js";

type RequestLogEntry = Schemas["SandboxRequestLogEntry"];
type RequestLogPage = Schemas["SandboxRequestLogPage"];

/** How many requests each platform's log keeps (the oldest go first). */
export const REQUESTS_PER_PLATFORM = 1000;
/** How many platforms' logs are kept (the one written longest ago goes first). */
const PLATFORMS_KEPT = 1000;

interface PlatformLog {
  /** Sequence of the newest entry; the first request is 1. */
  last: number;
  entries: RequestLogEntry[];
}

/**
 * Sandbox only: the recent API requests of each platform, in this process's
 * memory, for `GET /sandbox/logs/requests` (and the CLI's `logs tail`).
 * Bounded per platform and in platforms, so it never grows with traffic.
 *
 * An entry holds what identifies a request and its outcome, never what it
 * carried: no headers (credentials), no query string and no body (card
 * numbers, secrets, codes), and the path as the access log rewrites it
 * (tokens carried in paths removed).
 */
export class RequestLog implements RequestRecorder {
  private readonly platforms = new Map<string, PlatformLog>();

  record(platformId: string, entry: RecordedRequest): void {
    let log = this.platforms.get(platformId);
    if (log) {
      // Re-inserted: the Map's order is then least recently written first.
      this.platforms.delete(platformId);
    } else {
      log = { last: 0, entries: [] };
      if (this.platforms.size >= PLATFORMS_KEPT) {
        const oldest = this.platforms.keys().next().value;
        if (oldest !== undefined) this.platforms.delete(oldest);
      }
    }
    this.platforms.set(platformId, log);
    log.last += 1;
    log.entries.push({ sequence: log.last, ...entry });
    if (log.entries.length > REQUESTS_PER_PLATFORM) log.entries.shift();
  }

  /**
   * The requests after sequence `after`, oldest first, at most `limit`;
   * without `after`, the newest `limit` requests.
   */
  list(platformId: string, options: { after?: number; limit: number }): RequestLogPage {
    const log = this.platforms.get(platformId);
    const entries = log?.entries ?? [];
    const { after, limit } = options;
    const data =
      after === undefined
        ? entries.slice(Math.max(0, entries.length - limit))
        : entries.filter((entry) => entry.sequence > after).slice(0, limit);
    return { data, lastSequence: log?.last ?? 0 };
  }

  forget(platformId: string): void {
    this.platforms.delete(platformId);
  }
}
