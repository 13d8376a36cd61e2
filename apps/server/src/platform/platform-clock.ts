import type { Clock } from "../clock.js";
import type { Db } from "../db/client.js";
import type { SqlDriver } from "../db/sql.js";

// Each platform sees the sandbox clock: real time plus the offset it has
// advanced by (POST /sandbox/clock/advance). The offset lives in the database
// so every server process agrees on it.
export class PlatformClocks {
  constructor(
    private readonly db: Db,
    private readonly base: Clock,
    /** Read on every request: direct SQL when available (see db/sql.ts). */
    private readonly sql?: SqlDriver,
  ) {}

  async offsetSeconds(platformId: string): Promise<number> {
    if (this.sql) {
      const row = await this.sql.one(`SELECT "clockOffsetSeconds" FROM "Platform" WHERE "id" = ?`, [
        platformId,
      ]);
      return row ? Number(row.clockOffsetSeconds) : 0;
    }
    const row = await this.db.platform.findUnique({
      where: { id: platformId },
      select: { clockOffsetSeconds: true },
    });
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
