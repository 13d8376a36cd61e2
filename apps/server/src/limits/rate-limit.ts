import { randomUUID } from "node:crypto";
import type { Database } from "../db/database.js";
import { countOf, q } from "../db/query.js";
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

/**
 * Sliding-window limits kept in the database, so every server process sees
 * the same counts. Time comes from the caller (the platform's sandbox clock).
 */
export class RateLimiter {
  constructor(private readonly db: Database) {}

  /** Events of `key` still inside the window at `now`. */
  private inWindow(rule: RateRule, key: string, now: Date) {
    return q
      .selectFrom("RateLimitEvent")
      .where("key", "=", key)
      .where("at", ">", this.windowStart(rule, now));
  }

  private count(rule: RateRule, key: string, now: Date): Promise<number> {
    return this.db
      .one(this.inWindow(rule, key, now).select((eb) => eb.fn.countAll().as("count")))
      .then(countOf);
  }

  /** Old events of this key are no longer needed by any window. */
  private async forgetOld(rule: RateRule, key: string, now: Date): Promise<void> {
    await this.db.execute(
      q
        .deleteFrom("RateLimitEvent")
        .where("key", "=", key)
        .where("at", "<=", this.windowStart(rule, now)),
    );
  }

  private key(rule: RateRule, subject: string): string {
    return `${rule.name}:${subject}`;
  }

  private windowStart(rule: RateRule, now: Date): Date {
    return new Date(now.getTime() - rule.windowSeconds * 1000);
  }

  /** Seconds until the window holds fewer than `limit` events again. */
  private async retryAfter(rule: RateRule, key: string, now: Date): Promise<number> {
    const events = await this.db.all(
      this.inWindow(rule, key, now).select("at").orderBy("at", "desc").limit(rule.limit),
    );
    const oldestCounted = events.at(-1)?.at ?? now;
    return (oldestCounted.getTime() + rule.windowSeconds * 1000 - now.getTime()) / 1000;
  }

  /**
   * Counts one attempt, or refuses it with 429 when the window is full.
   * Insert first, then count: concurrent attempts in several processes can
   * never all slip under the limit (a refused attempt is removed again).
   */
  async hit(rule: RateRule, subject: string, now: Date, message: string): Promise<void> {
    const key = this.key(rule, subject);
    const id = randomUUID();
    await this.db.execute(q.insertInto("RateLimitEvent").values({ id, key, at: now }));
    if ((await this.count(rule, key, now)) <= rule.limit) {
      await this.forgetOld(rule, key, now);
      return;
    }
    await this.db.execute(q.deleteFrom("RateLimitEvent").where("id", "=", id));
    throw rateLimited(await this.retryAfter(rule, key, now), message);
  }

  /** Refuses with 429 when the window already holds `limit` events; counts nothing. */
  async check(rule: RateRule, subject: string, now: Date, message: string): Promise<void> {
    const key = this.key(rule, subject);
    if ((await this.count(rule, key, now)) >= rule.limit)
      throw rateLimited(await this.retryAfter(rule, key, now), message);
  }

  /** Counts one event without checking (e.g. a failed verification). */
  async record(rule: RateRule, subject: string, now: Date): Promise<void> {
    const key = this.key(rule, subject);
    await this.db.execute(
      q.insertInto("RateLimitEvent").values({ id: randomUUID(), key, at: now }),
    );
    await this.forgetOld(rule, key, now);
  }
}
