import { randomUUID } from "node:crypto";
import type { Database } from "../db/database.js";
import type { SqlProgram } from "../db/sql.js";
import { insert, one, prepared, q, run } from "../db/query.js";
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

/** A limit a hit must also be under, whose events it reads but does not add to. */
export interface Gate {
  rule: RateRule;
  message: string;
}

// Compiled once: a login counts attempts on every leg. One read gives the
// window's count, whether older events of the key are left to forget (they
// are deleted only then, so a subject seen once costs no delete), and the
// gate's count: each a count of its own over the (key, at) index, which
// measured five times cheaper on SQLite than one scan of both keys.
const countHit = prepared(
  (args: { key: string; since: Date; gateKey: string; gateSince: Date }) => {
    const events = (key: string) =>
      q
        .selectFrom("RateLimitEvent")
        .select((eb) => eb.fn.countAll().as("n"))
        .where("key", "=", key);
    return q.selectNoFrom([
      events(args.key).where("at", ">", args.since).as("count"),
      events(args.key).where("at", "<=", args.since).as("stale"),
      events(args.gateKey).where("at", ">", args.gateSince).as("gate"),
    ]);
  },
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

  /**
   * Counts one attempt, or refuses it with 429 when the window is full; with
   * a `gate`, also refuses it (first, and with the gate's message) when the
   * gate's window is already full, counting nothing.
   */
  async hit(
    rule: RateRule,
    subject: string,
    now: Date,
    message: string,
    gate?: Gate,
  ): Promise<void> {
    await this.hitWith(rule, subject, now, message, function* () {}, gate);
  }

  /**
   * {@link hit}, with the write the attempt is for (`then`) as the last step
   * of the same program: `then` runs only once the attempt is counted, and
   * not at all when it is refused. On SQLite the program is one transaction
   * (one commit); on PostgreSQL each step commits on its own, as hit's do.
   */
  async hitWith<R>(
    rule: RateRule,
    subject: string,
    now: Date,
    message: string,
    then: () => SqlProgram<R>,
    gate?: Gate,
  ): Promise<R> {
    const key = this.key(rule, subject);
    const since = this.windowStart(rule, now);
    // Without a gate, the gate's count reads the rule's own window, unused.
    const gateKey = gate ? this.key(gate.rule, subject) : key;
    const gateSince = gate ? this.windowStart(gate.rule, now) : since;
    type Refusal = { rule: RateRule; key: string; message: string };
    type Outcome = { refused: Refusal } | { refused: undefined; value: R };
    const outcome = await this.db.transaction(function* (): SqlProgram<Outcome> {
      const id = randomUUID();
      yield* insert("RateLimitEvent", { id, key, at: now });
      const counts = yield* one(countHit({ key, since, gateKey, gateSince }));
      const count = (column: "count" | "stale" | "gate") => Number(counts?.[column] ?? 0);
      const refusal: Refusal | undefined =
        gate && count("gate") >= gate.rule.limit
          ? { ...gate, key: gateKey }
          : count("count") > rule.limit
            ? { rule, key, message }
            : undefined;
      if (refusal !== undefined) {
        // Refused: the attempt is not counted.
        yield* run(forgetOne({ id }));
        return { refused: refusal };
      }
      if (count("stale") > 0) yield* run(forgetUntil({ key, until: since }));
      return { refused: undefined, value: yield* then() };
    }, "eachStep");
    if (outcome.refused) {
      const { refused } = outcome;
      throw rateLimited(await this.retryAfter(refused.rule, refused.key, now), refused.message);
    }
    return outcome.value;
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
