import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import { prepared, q } from "../db/query.js";

/** Read on every request. */
const clockOffset = prepared((args: { id: string }) =>
  q.selectFrom("Platform").select("clockOffsetSeconds").where("id", "=", args.id),
);

// Each platform sees the sandbox clock: real time plus the offset it has
// advanced by (POST /sandbox/clock/advance). The offset lives in the database
// so every server process agrees on it.
export class PlatformClocks {
  constructor(
    private readonly db: Database,
    private readonly base: Clock,
  ) {}

  async offsetSeconds(platformId: string): Promise<number> {
    const row = await this.db.one(clockOffset({ id: platformId }));
    return row?.clockOffsetSeconds ?? 0;
  }

  /** A clock for one request: the offset is read once, real time keeps running. */
  async forPlatform(platformId: string): Promise<Clock> {
    return this.withOffset(await this.offsetSeconds(platformId));
  }

  /** The clock of a platform whose offset the caller read (with other data it needed). */
  withOffset(offsetSeconds: number): Clock {
    const offsetMs = offsetSeconds * 1000;
    const base = this.base;
    return { now: () => new Date(base.now().getTime() + offsetMs) };
  }
}
