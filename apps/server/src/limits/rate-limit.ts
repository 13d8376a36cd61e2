import { sql } from "kysely";
import type { Database } from "../db/database.js";
import type { SqlInsert, SqlUpdate } from "../db/sql.js";
import { guardedClaim, prepared, q } from "../db/query.js";
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

/** The writes an attempt is for, made only once it is counted. */
export interface AttemptWrites {
  inserts?: readonly SqlInsert[];
  updates?: readonly SqlUpdate[];
  /**
   * An update that must also change a row for the other writes to be made
   * (e.g. using up a one-time code); made once the attempt is counted.
   */
  claim?: SqlUpdate;
}

/** A limit a hit must also be under, whose events it reads but does not add to. */
export interface Gate {
  rule: RateRule;
  message: string;
}

/**
 * A window's state is one row per key (the RateLimit table): the times of
 * its newest counted events, at most the rule's limit of them, in the order
 * counted (oldest first, but for concurrent attempts' milliseconds), each
 * written as epoch milliseconds in WIDTH digits. Fixed-width tokens compare
 * as text the way their times compare, so one statement, the same on SQLite
 * and PostgreSQL, decides, appends and trims. Fewer than `limit` events fall
 * in the window exactly when fewer than `limit` tokens are kept or the
 * oldest kept token is at or before the window's start.
 */
const WIDTH = 15;

function token(at: Date): string {
  return String(at.getTime()).padStart(WIDTH, "0");
}

/** The kept times of a row, in order. */
function timesOf(times: string | undefined): number[] {
  const out: number[] = [];
  for (let i = 0; i + WIDTH <= (times?.length ?? 0); i += WIDTH) {
    out.push(Number(times!.slice(i, i + WIDTH)));
  }
  return out.sort((a, b) => a - b);
}

const times = sql.ref<string>("RateLimit.times");
/**
 * An upsert's new times: the row's newest `keep` characters of tokens, then
 * the attempt's own. Every write of a window grows and trims it this way.
 */
const appended = (keep: number | string) =>
  sql<string>`case when length(${times}) > ${keep} then substr(${times}, length(${times}) - ${keep} + 1) else ${times} end || excluded."times"`;

/** The characters of a rule's earlier tokens kept when one more is counted. */
const keptBefore = (rule: RateRule) => (rule.limit - 1) * WIDTH;

// Compiled once: a login counts attempts on two of its legs. The hit is one
// statement: nothing is written when the gate's window is full (the SELECT
// yields no row) or the rule's own is (the update's WHERE fails), and then
// no row comes back. A row updated by another process in the meantime is
// read again by PostgreSQL's upsert before its WHERE is checked, so
// concurrent attempts in several processes can never slip past the limit.
const countHit = prepared(
  (args: {
    key: string;
    now: string;
    since: string;
    full: number;
    keep: number;
    gateKey: string;
    gateSince: string;
    gateFull: number;
  }) =>
    q
      .insertInto("RateLimit")
      .columns(["key", "times"])
      .expression(
        q
          .selectNoFrom([sql<string>`${args.key}`.as("key"), sql<string>`${args.now}`.as("times")])
          .where(({ not, exists }) =>
            not(
              exists(
                q
                  .selectFrom("RateLimit")
                  .select("key")
                  .where("key", "=", args.gateKey)
                  .where(sql<boolean>`length(${times}) >= ${args.gateFull}`)
                  .where(sql<boolean>`substr(${times}, 1, ${WIDTH}) > ${args.gateSince}`),
              ),
            ),
          ),
      )
      .onConflict((oc) =>
        oc
          .column("key")
          .doUpdateSet({ times: appended(args.keep) })
          .where(({ or }) =>
            or([
              sql<boolean>`length(${times}) < ${args.full}`,
              sql<boolean>`substr(${times}, 1, ${WIDTH}) <= ${args.since}`,
            ]),
          ),
      )
      .returning("times"),
);
/** Counts an event without checking. */
const countEvent = prepared((args: { key: string; now: string; keep: number }) =>
  q
    .insertInto("RateLimit")
    .values({ key: args.key, times: args.now })
    .onConflict((oc) => oc.column("key").doUpdateSet({ times: appended(args.keep) })),
);
const windowsOf = prepared((args: { key: string; gateKey: string }) =>
  q.selectFrom("RateLimit").selectAll().where("key", "in", [args.key, args.gateKey]),
);

/**
 * Sliding-window limits kept in the database, so every server process sees
 * the same counts. Time comes from the caller (the platform's sandbox clock).
 * Counting an attempt is one statement (see countHit); a refused attempt is
 * not counted.
 */
export class RateLimiter {
  constructor(private readonly db: Database) {}

  private key(rule: RateRule, subject: string): string {
    return `${rule.name}:${subject}`;
  }

  private windowStart(rule: RateRule, now: Date): Date {
    return new Date(now.getTime() - rule.windowSeconds * 1000);
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
    await this.hitWith(rule, subject, now, message, {}, gate);
  }

  /**
   * {@link hit}, with the writes the attempt is for, made in the same step
   * only when the attempt is counted: one statement on PostgreSQL, one
   * commit on SQLite. False when the attempt was counted but its claim
   * changed nothing (and so nothing else was written); true otherwise.
   */
  async hitWith(
    rule: RateRule,
    subject: string,
    now: Date,
    message: string,
    writes: AttemptWrites,
    gate?: Gate,
  ): Promise<boolean> {
    const key = this.key(rule, subject);
    // Without a gate, the gate's check reads the rule's own row and can never
    // refuse (no row holds more tokens than its rule's limit).
    const gateKey = gate ? this.key(gate.rule, subject) : key;
    const gateRule = gate?.rule ?? { ...rule, limit: rule.limit + 1 };
    const args = {
      key,
      now: token(now),
      since: token(this.windowStart(rule, now)),
      full: rule.limit * WIDTH,
      keep: keptBefore(rule),
      gateKey,
      gateSince: token(this.windowStart(gateRule, now)),
      gateFull: gateRule.limit * WIDTH,
    };
    const written = await this.db.transaction(
      () => guardedClaim(countHit(args), writes.claim, writes.inserts ?? [], writes.updates ?? []),
      "eachStep",
    );
    if (written === undefined) throw await this.refusal(rule, key, message, gate, gateKey, now);
    return written;
  }

  /** The 429 for a refused attempt: the gate's when its window is full, else the rule's. */
  private async refusal(
    rule: RateRule,
    key: string,
    message: string,
    gate: Gate | undefined,
    gateKey: string,
    now: Date,
  ): Promise<ApiError> {
    const rows = await this.db.all(windowsOf({ key, gateKey }));
    const kept = (k: string) => timesOf(rows.find((row) => row.key === k)?.times);
    // The window frees a place when the oldest of its newest `limit` events leaves it.
    const freesIn = (r: RateRule, events: number[]) => {
      const inWindow = events.filter((at) => at > this.windowStart(r, now).getTime());
      if (inWindow.length < r.limit) return undefined;
      return (inWindow[inWindow.length - r.limit]! + r.windowSeconds * 1000 - now.getTime()) / 1000;
    };
    const gateWait = gate ? freesIn(gate.rule, kept(gateKey)) : undefined;
    if (gate && gateWait !== undefined) return rateLimited(gateWait, gate.message);
    // Another process's attempts may have moved the window since: wait at least a second.
    return rateLimited(freesIn(rule, kept(key)) ?? 1, message);
  }

  /** Counts one event without checking (e.g. a failed verification). */
  async record(rule: RateRule, subject: string, now: Date): Promise<void> {
    await this.db.execute(
      countEvent({
        key: this.key(rule, subject),
        now: token(now),
        keep: keptBefore(rule),
      }),
    );
  }
}
