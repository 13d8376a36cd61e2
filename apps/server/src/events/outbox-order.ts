import { SKIP_LOCKED, type SqlProgram, type SqlRow } from "../db/sql.js";
import {
  claimedEvent,
  dateOf,
  EVENT,
  optionalDate,
  releaseWebhookEvent,
  CLAIMED_COLUMNS,
  type AttemptRecord,
  type ClaimedEvent,
  type DueEvent,
  type PollInput,
} from "./outbox-rows.js";

// The order of an object's events: one is delivered at a time, in seq order.
// An event with an earlier pending event of its object is blocked; a poll
// puts it off until that one can next finish, and that one, once finished,
// wakes it. A claimed event takes the events queued right behind it along,
// as a run.

/** An earlier pending event of the same object as the row `alias`. */
export const EARLIER_PENDING = (alias: string) =>
  `EXISTS (SELECT 1 FROM ${EVENT} b WHERE b."platformId" = ${alias}."platformId"
    AND b."objectId" = ${alias}."objectId" AND b."status" = 'PENDING'
    AND b."seq" < ${alias}."seq")`;

/** The first pending event of an object. */
const HEAD_SQL = `SELECT "id", "nextAttemptAt", "lockedUntil" FROM ${EVENT}
  WHERE "platformId" = ? AND "objectId" = ? AND "status" = 'PENDING' ORDER BY "seq" LIMIT 1`;

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

/** The first pending event of a blocked event's object. */
export function* headOf(event: DueEvent): SqlProgram<SqlRow | undefined> {
  return (yield {
    kind: "one",
    sql: HEAD_SQL,
    params: [event.platformId, event.objectId],
  }) as SqlRow | undefined;
}

/** An object's first pending event is due and not leased: a poll can claim it now. */
export function mayGo(head: SqlRow, now: Date): boolean {
  const leasedUntil = optionalDate(head.lockedUntil)?.getTime() ?? 0;
  return dateOf(head.nextAttemptAt).getTime() <= now.getTime() && leasedUntil < now.getTime();
}

/**
 * Puts a blocked event off until its object's first pending event can next
 * finish. Optimistic: if that one finished since the event was read, its
 * wake changed this event's nextAttemptAt and the put-off does not apply.
 */
export function* putOff(event: DueEvent, head: SqlRow, now: Date): SqlProgram<void> {
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
 * Claims, with the same lease, the events queued right behind a claimed
 * one: up to the first that is leased or backing off after a failed attempt
 * of its own (which only a replay of an earlier event leaves behind).
 */
export function* claimFollowers(head: ClaimedEvent, input: PollInput): SqlProgram<ClaimedEvent[]> {
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

/**
 * The next pending event of the object may go now. Its nextAttemptAt becomes
 * earlier than both now and what it was: the write always changes it, which
 * cancels a put-off computed from a stale view of the finished event (see
 * putOff), and the object's first event stays ahead of those queued behind
 * it in due order. A later time would sort it behind them, and with enough of
 * them waiting the polls would read only blocked events and never reach it.
 */
export function* wakeSuccessor(wake: NonNullable<AttemptRecord["wake"]>): SqlProgram<void> {
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
