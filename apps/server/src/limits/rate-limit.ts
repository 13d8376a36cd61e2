import { randomUUID } from "node:crypto";
import type { Db } from "../db/client.js";
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
  constructor(private readonly db: Db) {}

  private key(rule: RateRule, subject: string): string {
    return `${rule.name}:${subject}`;
  }

  private windowStart(rule: RateRule, now: Date): Date {
    return new Date(now.getTime() - rule.windowSeconds * 1000);
  }

  /** Seconds until the window holds fewer than `limit` events again. */
  private async retryAfter(rule: RateRule, key: string, now: Date): Promise<number> {
    const events = await this.db.rateLimitEvent.findMany({
      where: { key, at: { gt: this.windowStart(rule, now) } },
      orderBy: { at: "desc" },
      select: { at: true },
      take: rule.limit,
    });
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
    await this.db.rateLimitEvent.create({ data: { id, key, at: now } });
    const count = await this.db.rateLimitEvent.count({
      where: { key, at: { gt: this.windowStart(rule, now) } },
    });
    if (count <= rule.limit) {
      // Old events of this key are no longer needed by any window.
      await this.db.rateLimitEvent.deleteMany({
        where: { key, at: { lte: this.windowStart(rule, now) } },
      });
      return;
    }
    await this.db.rateLimitEvent.delete({ where: { id } });
    throw rateLimited(await this.retryAfter(rule, key, now), message);
  }

  /** Refuses with 429 when the window already holds `limit` events; counts nothing. */
  async check(rule: RateRule, subject: string, now: Date, message: string): Promise<void> {
    const key = this.key(rule, subject);
    const count = await this.db.rateLimitEvent.count({
      where: { key, at: { gt: this.windowStart(rule, now) } },
    });
    if (count >= rule.limit) throw rateLimited(await this.retryAfter(rule, key, now), message);
  }

  /** Counts one event without checking (e.g. a failed verification). */
  async record(rule: RateRule, subject: string, now: Date): Promise<void> {
    const key = this.key(rule, subject);
    await this.db.rateLimitEvent.create({ data: { id: randomUUID(), key, at: now } });
    await this.db.rateLimitEvent.deleteMany({
      where: { key, at: { lte: this.windowStart(rule, now) } },
    });
  }
}
