import { SKIP_LOCKED, type SqlProgram, type SqlRow, type SqlValue } from "../db/sql.js";
import { defineSqlPrograms } from "../db/sql-programs.js";
import type { SqlRunner } from "../db/sql-runner.js";

// The webhook dispatcher's reads and writes of the outbox (dispatcher.ts),
// in direct SQL written once for both databases.
//
// The dispatcher runs beside the API under the same load, so each query is
// bounded by what it asks for, never by the backlog:
// - a platform's due events come from the (platformId, status,
//   nextAttemptAt) index in due order, so LIMIT ends the scan, and the
//   events of a platform without a URL are never read;
// - "is an earlier event of this object pending" is one probe of the
//   (platformId, objectId, status, seq) index.
//
// A poll is one program (claimDueWebhookEvents) and the outcomes of many
// deliveries are another (recordWebhookAttempts), each one transaction. On
// SQLite they run on the writer thread, committed with the API's writes; its
// connection's page cache stays valid across its own commits, where another
// connection would read the pages just written again on every poll.

/** A platform that has a webhook URL, as a delivery needs it. */
export interface DeliveryTarget {
  id: string;
  webhookUrl: string;
  webhookPrivateKey: string;
  clockOffsetSeconds: number;
}

/** An event claimed by a poll, with its platform as read in that poll. */
export interface ClaimedEvent {
  id: string;
  platformId: string;
  objectId: string;
  seq: bigint;
  payload: string;
  attemptCount: number;
  replayCount: number;
  firstAttemptAt: Date | null;
  platform: DeliveryTarget;
}

export interface PollInput {
  now: Date;
  leaseUntil: Date;
  /** Stored as lockedBy on every event claimed: fences each later write. */
  token: string;
  /** Slots free in this process. */
  free: number;
  /** Most deliveries in flight per platform. */
  platformCap: number;
  /** Deliveries in flight per platform in this process. */
  inFlight: Record<string, number>;
  /**
   * Due events read per platform beyond its free slots, so that a few found
   * blocked or taken by another process do not leave slots empty.
   */
  readAhead: number;
  /** Most events in one run (see ClaimedRun). */
  runLength: number;
}

/**
 * Events of one object claimed together: the first in line, then those
 * queued right behind it, in the order they happened. The dispatcher sends
 * them one after the other, so a busy object's events do not each wait for
 * a poll (and on a loaded server, for a turn of its event loop) of their own.
 */
export type ClaimedRun = readonly ClaimedEvent[];

export interface PollResult {
  /** Runs, the earliest due first. */
  claimed: ClaimedRun[];
  /** More due events may be waiting than this poll had room for. */
  mayBeMore: boolean;
}

/** One attempt and the event's state after it, written together. */
export interface AttemptRecord {
  eventId: string;
  /** The claim's lease token and round: the write applies only while both still hold. */
  token: string;
  replayCount: number;
  attempt: {
    id: string;
    attemptedAt: Date;
    httpStatus: number | null;
    latencyMs: number;
    error: string | null;
  };
  status: "PENDING" | "DELIVERED" | "FAILED";
  firstAttemptAt: Date;
  attemptCount: number;
  /** When the next attempt is due; unchanged when absent. */
  nextAttemptAt?: Date;
  deliveredAt?: Date;
  /** The event is finished: the next pending event of its object may go at `at`. */
  wake?: { platformId: string; objectId: string; seq: bigint; at: Date };
}

interface DueEvent {
  id: string;
  platformId: string;
  objectId: string;
  nextAttemptAt: Date;
  /** An earlier event of the same object is still pending: not its turn. */
  blocked: boolean;
}

const EVENT = `"WebhookEvent"`;
/** An earlier pending event of the same object as the row `alias`. */
const EARLIER_PENDING = (alias: string) =>
  `EXISTS (SELECT 1 FROM ${EVENT} b WHERE b."platformId" = ${alias}."platformId"
    AND b."objectId" = ${alias}."objectId" AND b."status" = 'PENDING'
    AND b."seq" < ${alias}."seq")`;

const TARGETS_SQL = `SELECT "id", "webhookUrl", "webhookPrivateKey", "clockOffsetSeconds"
  FROM "Platform" WHERE "webhookUrl" IS NOT NULL`;

const DUE_SQL = `SELECT e."id", e."objectId", e."nextAttemptAt",
    ${EARLIER_PENDING("e")} AS "blocked"
  FROM ${EVENT} e
  WHERE e."platformId" = ? AND e."status" = 'PENDING' AND e."nextAttemptAt" <= ?
    AND (e."lockedUntil" IS NULL OR e."lockedUntil" < ?)
  ORDER BY e."nextAttemptAt" LIMIT ?`;

const HEAD_SQL = `SELECT "id", "nextAttemptAt", "lockedUntil" FROM ${EVENT}
  WHERE "platformId" = ? AND "objectId" = ? AND "status" = 'PENDING' ORDER BY "seq" LIMIT 1`;

/**
 * A row whose lease is live, that is no longer due, or that has an earlier
 * pending event of its object does not match: of two processes racing for
 * an event exactly one gets it, and an object's order holds even if an
 * earlier event became pending again (a replay) since the poll read it.
 */
const CLAIMED_COLUMNS = `"id", "platformId", "objectId", "seq", "payload", "attemptCount",
  "replayCount", "firstAttemptAt"`;
const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ");
// The status test is written so that no index can serve it: with it indexable,
// SQLite reads the claim's few ids through the due index (every due event)
// instead of the primary key.
// On PostgreSQL the rows are chosen under row locks that skip (SKIP_LOCKED):
// a row another process is claiming or recording is left to it, so a poll
// never waits for a lock and takes part in no deadlock.
const claimSql = (n: number) => `UPDATE ${EVENT} SET "lockedUntil" = ?, "lockedBy" = ?
  WHERE "id" IN (SELECT c."id" FROM ${EVENT} c
    WHERE c."id" IN (${placeholders(n)}) AND (c."status" || '') = 'PENDING'
      AND c."nextAttemptAt" <= ? AND (c."lockedUntil" IS NULL OR c."lockedUntil" < ?)
      AND NOT ${EARLIER_PENDING("c")} ${SKIP_LOCKED})
  RETURNING ${CLAIMED_COLUMNS}`;

/** The pending events queued behind a claimed one, in order. */
const FOLLOWERS_SQL = `SELECT "id", "seq", "nextAttemptAt", "lockedUntil", "attemptCount" FROM ${EVENT}
  WHERE "platformId" = ? AND "objectId" = ? AND "status" = 'PENDING' AND "seq" > ?
  ORDER BY "seq" LIMIT ?`;

/**
 * Followers are claimed without the earlier-pending test: the event before
 * each is in the run. They are the object's pending events in a range of
 * `seq`, so one statement of one shape claims a run of any length.
 */
const CLAIM_FOLLOWERS_SQL = `UPDATE ${EVENT} SET "lockedUntil" = ?, "lockedBy" = ?
  WHERE "id" IN (SELECT f."id" FROM ${EVENT} f
    WHERE f."platformId" = ? AND f."objectId" = ? AND f."seq" > ? AND f."seq" <= ?
      AND f."status" = 'PENDING' AND (f."lockedUntil" IS NULL OR f."lockedUntil" < ?)
    ${SKIP_LOCKED})
  RETURNING ${CLAIMED_COLUMNS}`;

/** A date as read: SQLite holds Prisma's ISO text, PostgreSQL's driver gives a Date. */
function dateOf(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

function optionalDate(value: unknown): Date | null {
  return value === null || value === undefined ? null : dateOf(value);
}

/**
 * One poll: the platforms with a URL and room, up to their room of due
 * events each, and the claim of the earliest due that are first in line for
 * their object, within the process's free slots. Events found blocked are
 * put off until their predecessor's next attempt (or lease end), so they do
 * not fill every poll, or, when that predecessor may go now, lead the poll to
 * it; a predecessor that finishes wakes its successor (see wakeSuccessor),
 * which also cancels a put-off computed from a stale view.
 */
export function* claimDueWebhookEvents(input: PollInput): SqlProgram<PollResult> {
  const { now, free } = input;
  const room = (platformId: string) =>
    Math.min(free, input.platformCap - (input.inFlight[platformId] ?? 0));
  const targets = new Map<string, DeliveryTarget>();
  for (const row of (yield { kind: "all", sql: TARGETS_SQL, params: [] }) as SqlRow[]) {
    const id = String(row.id);
    // A platform at its cap is not asked, so the events of the others are
    // found even behind a long backlog of its own.
    if (room(id) <= 0) continue;
    targets.set(id, {
      id,
      webhookUrl: String(row.webhookUrl),
      webhookPrivateKey: String(row.webhookPrivateKey),
      clockOffsetSeconds: Number(row.clockOffsetSeconds),
    });
  }

  let mayBeMore = false;
  const due: DueEvent[] = [];
  for (const platformId of targets.keys()) {
    const limit = room(platformId) + input.readAhead;
    const rows = (yield {
      kind: "all",
      sql: DUE_SQL,
      params: [platformId, now, now, limit],
    }) as SqlRow[];
    if (rows.length === limit) mayBeMore = true;
    for (const row of rows) {
      due.push({
        id: String(row.id),
        platformId,
        objectId: String(row.objectId),
        nextAttemptAt: dateOf(row.nextAttemptAt),
        blocked: row.blocked === true || Number(row.blocked) === 1,
      });
    }
  }

  // Earliest due first across platforms, each within its room.
  due.sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime());
  const taken = new Map<string, number>();
  const chosen: string[] = [];
  // The first pending event of each object met blocked, read once a poll.
  const firstOf = new Map<string, SqlRow | undefined>();
  for (const event of due) {
    let id = event.id;
    if (event.blocked) {
      const key = `${event.platformId} ${event.objectId}`;
      if (!firstOf.has(key)) firstOf.set(key, yield* headOf(event));
      const head = firstOf.get(key);
      if (!head) continue;
      if (!mayGo(head, now)) {
        yield* putOff(event, head, now);
        continue;
      }
      // Its object's first event may go now but sorts after it (woken after
      // it was queued): that one is taken in its place, or with many such
      // events waiting the polls would read only them and never reach it.
      id = String(head.id);
    }
    if (chosen.includes(id)) continue;
    if (chosen.length >= free) {
      mayBeMore = true;
      continue;
    }
    const count = taken.get(event.platformId) ?? 0;
    if (count >= room(event.platformId)) continue;
    taken.set(event.platformId, count + 1);
    chosen.push(id);
  }
  if (chosen.length === 0) return { claimed: [], mayBeMore };

  const params: SqlValue[] = [input.leaseUntil, input.token, ...chosen, now, now];
  const rows = (yield { kind: "all", sql: claimSql(chosen.length), params }) as SqlRow[];
  const order = new Map(chosen.map((id, i) => [id, i]));
  const heads = rows.map((row) => claimedEvent(row, targets));
  heads.sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  const claimed: ClaimedRun[] = [];
  for (const head of heads) claimed.push([head, ...(yield* claimFollowers(head, input))]);
  return { claimed, mayBeMore };
}

function claimedEvent(row: SqlRow, targets: Map<string, DeliveryTarget>): ClaimedEvent {
  return {
    id: String(row.id),
    platformId: String(row.platformId),
    objectId: String(row.objectId),
    seq: BigInt(row.seq as string | bigint),
    payload: String(row.payload),
    attemptCount: Number(row.attemptCount),
    replayCount: Number(row.replayCount),
    firstAttemptAt: optionalDate(row.firstAttemptAt),
    platform: targets.get(String(row.platformId))!,
  };
}

/**
 * Claims, with the same lease, the events queued right behind a claimed
 * one: up to the first that is leased or backing off after a failed attempt
 * of its own (which only a replay of an earlier event leaves behind).
 */
function* claimFollowers(head: ClaimedEvent, input: PollInput): SqlProgram<ClaimedEvent[]> {
  if (input.runLength <= 1) return [];
  const now = input.now.getTime();
  const rows = (yield {
    kind: "all",
    sql: FOLLOWERS_SQL,
    params: [head.platformId, head.objectId, head.seq, input.runLength - 1],
  }) as SqlRow[];
  const ids: string[] = [];
  let lastSeq = head.seq;
  for (const row of rows) {
    const leased = (optionalDate(row.lockedUntil)?.getTime() ?? 0) >= now;
    const backingOff = Number(row.attemptCount) > 0 && dateOf(row.nextAttemptAt).getTime() > now;
    if (leased || backingOff) break;
    ids.push(String(row.id));
    lastSeq = BigInt(row.seq as string | bigint);
  }
  if (ids.length === 0) return [];
  // Anything else the range takes (an event a replay made pending since the
  // read) is not in `ids`, and is released below.
  const claimed = (yield {
    kind: "all",
    sql: CLAIM_FOLLOWERS_SQL,
    params: [
      input.leaseUntil,
      input.token,
      head.platformId,
      head.objectId,
      head.seq,
      lastSeq,
      input.now,
    ],
  }) as SqlRow[];
  const byId = new Map(claimed.map((row) => [String(row.id), row]));
  const followers: ClaimedEvent[] = [];
  for (const id of ids) {
    const row = byId.get(id);
    // Taken meanwhile (PostgreSQL, another process): the run ends before it.
    if (!row) break;
    byId.delete(id);
    followers.push(claimedEvent(row, new Map([[head.platformId, head.platform]])));
  }
  for (const id of byId.keys()) yield* releaseWebhookEvent({ id, token: input.token });
  return followers;
}

/** The first pending event of a blocked event's object. */
function* headOf(event: DueEvent): SqlProgram<SqlRow | undefined> {
  return (yield {
    kind: "one",
    sql: HEAD_SQL,
    params: [event.platformId, event.objectId],
  }) as SqlRow | undefined;
}

/** An object's first pending event is due and not leased: a poll can claim it now. */
function mayGo(head: SqlRow, now: Date): boolean {
  const leasedUntil = optionalDate(head.lockedUntil)?.getTime() ?? 0;
  return dateOf(head.nextAttemptAt).getTime() <= now.getTime() && leasedUntil < now.getTime();
}

/**
 * Puts a blocked event off until its object's first pending event can next
 * finish. Optimistic: if that one finished since the event was read, its
 * wake changed this event's nextAttemptAt and the put-off does not apply.
 */
function* putOff(event: DueEvent, head: SqlRow, now: Date): SqlProgram<void> {
  const until = Math.max(
    dateOf(head.nextAttemptAt).getTime(),
    optionalDate(head.lockedUntil)?.getTime() ?? 0,
  );
  if (until <= now.getTime()) return;
  yield {
    kind: "run",
    sql: `UPDATE ${EVENT} SET "nextAttemptAt" = ?
      WHERE "id" IN (SELECT p."id" FROM ${EVENT} p
        WHERE p."id" = ? AND p."status" = 'PENDING' AND p."nextAttemptAt" = ? ${SKIP_LOCKED})`,
    params: [new Date(until), event.id, event.nextAttemptAt],
  };
}

/**
 * Records attempts and moves their events on, each fenced by its claim's
 * token and round, and gives back untouched the claimed events not attempted
 * (the rest of a run after a failure).
 */
export function* recordWebhookAttempts(input: {
  records: readonly AttemptRecord[];
  released: readonly { id: string; token: string }[];
}): SqlProgram<void> {
  // Rows are locked in one order, by id, in every such transaction, and the
  // successors woken after them, by object: two processes recording at once
  // wait for each other at most, never in a cycle. (A poll never waits at
  // all: it skips locked rows.)
  const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const writes = [
    ...input.released.map((released) => ({ id: released.id, released, record: undefined })),
    ...input.records.map((record) => ({ id: record.eventId, released: undefined, record })),
  ].sort(byId);
  const wakes = new Map<string, NonNullable<AttemptRecord["wake"]>>();
  for (const { released, record: r } of writes) {
    if (released) {
      yield* releaseWebhookEvent(released);
      continue;
    }
    if (!r) continue;
    const changed = (yield {
      kind: "run",
      sql: `UPDATE ${EVENT} SET "lockedUntil" = NULL, "lockedBy" = NULL, "status" = ?,
          "firstAttemptAt" = ?, "attemptCount" = ?,
          "nextAttemptAt" = COALESCE(?, "nextAttemptAt"), "deliveredAt" = COALESCE(?, "deliveredAt")
        WHERE "id" = ? AND "lockedBy" = ? AND "replayCount" = ?`,
      params: [
        r.status,
        r.firstAttemptAt,
        r.attemptCount,
        r.nextAttemptAt ?? null,
        r.deliveredAt ?? null,
        r.eventId,
        r.token,
        r.replayCount,
      ],
    }) as number | bigint;
    if (Number(changed) === 0) {
      // Replayed meanwhile (or the lease was lost): the attempt still joins
      // its history, and the claim is let go if it is ours. An event that is
      // gone was deleted with its platform (DELETE /sandbox/platforms/...):
      // nothing of it may be written back.
      const exists = yield {
        kind: "one",
        sql: `SELECT 1 AS "x" FROM ${EVENT} WHERE "id" = ?`,
        params: [r.eventId],
      };
      if (exists === undefined) continue;
      yield* insertAttempt(r);
      yield* releaseWebhookEvent({ id: r.eventId, token: r.token });
      continue;
    }
    yield* insertAttempt(r);
    if (r.wake) {
      // Of an object's finished events, the latest decides who is next.
      const key = `${r.wake.platformId} ${r.wake.objectId}`;
      const known = wakes.get(key);
      if (!known || known.seq < r.wake.seq) wakes.set(key, r.wake);
    }
  }
  for (const key of [...wakes.keys()].sort()) yield* wakeSuccessor(wakes.get(key)!);
}

function* insertAttempt(r: AttemptRecord): SqlProgram<void> {
  yield { kind: "insert", table: "WebhookAttempt", row: { ...r.attempt, eventId: r.eventId } };
}

/**
 * The next pending event of the object may go now. Its nextAttemptAt becomes
 * earlier than both now and what it was: the write always changes it, which
 * cancels a put-off computed from a stale view of the finished event (see
 * putOff), and the object's first event stays ahead of those queued behind
 * it in due order. A later time would sort it behind them, and with enough of
 * them waiting the polls would read only blocked events and never reach it.
 */
function* wakeSuccessor(wake: NonNullable<AttemptRecord["wake"]>): SqlProgram<void> {
  const next = (yield {
    kind: "one",
    sql: `SELECT "id", "nextAttemptAt" FROM ${EVENT}
      WHERE "platformId" = ? AND "objectId" = ? AND "status" = 'PENDING' AND "seq" > ?
      ORDER BY "seq" LIMIT 1`,
    params: [wake.platformId, wake.objectId, wake.seq],
  }) as SqlRow | undefined;
  if (!next) return;
  const at = Math.min(dateOf(next.nextAttemptAt).getTime(), wake.at.getTime()) - 1;
  yield {
    kind: "run",
    sql: `UPDATE ${EVENT} SET "nextAttemptAt" = ? WHERE "id" = ?`,
    params: [new Date(at), String(next.id)],
  };
}

/** Gives a claimed event back untouched, if the claim still holds it. */
function* releaseWebhookEvent(input: { id: string; token: string }): SqlProgram<void> {
  yield {
    kind: "run",
    sql: `UPDATE ${EVENT} SET "lockedUntil" = NULL, "lockedBy" = NULL
      WHERE "id" = ? AND "lockedBy" = ?`,
    params: [input.id, input.token],
  };
}

/**
 * A claim's owner (`host:pid:tag`, see WebhookDispatcher) that is a process
 * of this host no longer running. The tag is the process's own: an owner
 * with `self`'s pid and another tag is an earlier process whose pid was
 * reused (a container restarted as pid 1); with the same tag, it is this
 * process (another dispatcher in it, or this one).
 */
export function ownerIsGone(owner: string, self: { host: string; pid: number; owner: string }) {
  const [host, pidText] = owner.split(":");
  const pid = Number(pidText);
  if (host !== self.host || !Number.isSafeInteger(pid) || pid <= 0) return false;
  if (owner === self.owner) return false;
  if (pid === self.pid) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    // EPERM: a process of another user has the pid; it may be ours, alive.
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/**
 * Gives back the events leased by processes of this host that are gone (a
 * crash, SIGKILL): their deliveries were cut off, and waiting for the lease
 * to run out would hold those events, and every later event of their
 * objects, for up to WEBHOOK_LEASE_MS. Leases of other hosts' processes are
 * left to expire. Returns how many events were given back.
 */
export function* releaseAbandonedWebhookEvents(input: {
  now: Date;
  self: { host: string; pid: number; owner: string };
}): SqlProgram<number> {
  const rows = (yield {
    kind: "all",
    sql: `SELECT DISTINCT "lockedBy" FROM ${EVENT}
      WHERE "status" = 'PENDING' AND "lockedUntil" >= ?`,
    params: [input.now],
  }) as SqlRow[];
  // A token is `owner:claim`; the owner is its first three parts.
  const owners = new Set(rows.map((row) => String(row.lockedBy).split(":").slice(0, 3).join(":")));
  let released = 0;
  for (const owner of owners) {
    if (!ownerIsGone(owner, input.self)) continue;
    const changed = (yield {
      kind: "run",
      sql: `UPDATE ${EVENT} SET "lockedUntil" = NULL, "lockedBy" = NULL
        WHERE "status" = 'PENDING' AND "lockedBy" LIKE ?`,
      params: [`${owner}:%`],
    }) as number | bigint;
    released += Number(changed);
  }
  return released;
}

/** The outbox's programs: the writer thread imports this module by its URL to run them. */
const programs = defineSqlPrograms(import.meta.url, {
  claimDueWebhookEvents,
  recordWebhookAttempts,
  releaseAbandonedWebhookEvents,
});

export class OutboxStore {
  constructor(private readonly writer: SqlRunner) {}

  releaseAbandoned(input: {
    now: Date;
    self: { host: string; pid: number; owner: string };
  }): Promise<number> {
    return this.writer.run(programs.releaseAbandonedWebhookEvents, input);
  }

  poll(input: PollInput): Promise<PollResult> {
    return this.writer.run(programs.claimDueWebhookEvents, input);
  }

  async recordAttempts(
    records: readonly AttemptRecord[],
    released: readonly { id: string; token: string }[] = [],
  ): Promise<void> {
    if (records.length + released.length > 0) {
      await this.writer.run(programs.recordWebhookAttempts, { records, released });
    }
  }
}
