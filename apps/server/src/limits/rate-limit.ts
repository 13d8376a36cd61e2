import { randomUUID } from "node:crypto";
import type { Database } from "../db/database.js";
import type { SqlProgram } from "../db/sql.js";
import { countOf, insert, one, prepared, q, run } from "../db/query.js";
import { ApiError } from "../errors.js";

/** At most `limit` counted events per `windowSeconds`, per subject. */
export interface RateRule {
  name: string;
  limit: number;
  windowSeconds: number;
}

function rateLimited(retryAfterSeconds: number, message: string): ApiError {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new ApiError(429, "RATE_LIMITED", message, {
    headers: { "Retry-After": String(seconds) },
    details: { retryAfterSeconds: seconds },
  });
}

// Compiled once: a login counts attempts on every leg.
const countSince = prepared((args: { key: string; since: Date }) =>
  q
    .selectFrom("RateLimitEvent")
    .select((eb) => eb.fn.countAll().as("count"))
    .where("key", "=", args.key)
    .where("at", ">", args.since),
);
const forgetUntil = prepared((args: { key: string; until: Date }) =>
  q.deleteFrom("RateLimitEvent").where("key", "=", args.key).where("at", "<=", args.until),
);
const forgetOne = prepared((args: { id: string }) =>
  q.deleteFrom("RateLimitEvent").where("id", "=", args.id),
);

/**
 * Sliding-window limits kept in the database, so every server process sees
 * the same counts. Time comes from the caller (the platform's sandbox clock).
 *
 * Each call is one program committed step by step ("eachStep"): on SQLite one
 * commit, on PostgreSQL no BEGIN/COMMIT round trips. The insert is committed
 * before the count, so concurrent attempts in several processes can never all
 * slip under the limit.
 */
export class RateLimiter {
  constructor(private readonly db: Database) {}

  private key(rule: RateRule, subject: string): string {
    return `${rule.name}:${subject}`;
  }

  private windowStart(rule: RateRule, now: Date): Date {
    return new Date(now.getTime() - rule.windowSeconds * 1000);
  }

  /** Seconds until the window holds fewer than `limit` events again. */
  private async retryAfter(rule: RateRule, key: string, now: Date): Promise<number> {
    const events = await this.db.all(
      q
        .selectFrom("RateLimitEvent")
        .select("at")
        .where("key", "=", key)
        .where("at", ">", this.windowStart(rule, now))
        .orderBy("at", "desc")
        .limit(rule.limit),
    );
    const oldestCounted = events.at(-1)?.at ?? now;
    return (oldestCounted.getTime() + rule.windowSeconds * 1000 - now.getTime()) / 1000;
  }

  /** Counts one attempt, or refuses it with 429 when the window is full. */
  async hit(rule: RateRule, subject: string, now: Date, message: string): Promise<void> {
    const key = this.key(rule, subject);
    const since = this.windowStart(rule, now);
    const counted = await this.db.transaction(function* (): SqlProgram<boolean> {
      const id = randomUUID();
      yield* insert("RateLimitEvent", { id, key, at: now });
      if (countOf(yield* one(countSince({ key, since }))) <= rule.limit) {
        yield* run(forgetUntil({ key, until: since }));
        return true;
      }
      // Refused: the attempt is not counted.
      yield* run(forgetOne({ id }));
      return false;
    }, "eachStep");
    if (!counted) throw rateLimited(await this.retryAfter(rule, key, now), message);
  }

  /** Refuses with 429 when the window already holds `limit` events; counts nothing. */
  async check(rule: RateRule, subject: string, now: Date, message: string): Promise<void> {
    const key = this.key(rule, subject);
    const row = await this.db.one(countSince({ key, since: this.windowStart(rule, now) }));
    if (countOf(row) >= rule.limit)
      throw rateLimited(await this.retryAfter(rule, key, now), message);
  }

  /** Counts one event without checking (e.g. a failed verification). */
  async record(rule: RateRule, subject: string, now: Date): Promise<void> {
    const key = this.key(rule, subject);
    const until = this.windowStart(rule, now);
    await this.db.transaction(function* (): SqlProgram<void> {
      yield* insert("RateLimitEvent", { id: randomUUID(), key, at: now });
      yield* run(forgetUntil({ key, until }));
    }, "eachStep");
  }
}
