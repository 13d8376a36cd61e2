import { SKIP_LOCKED, type SqlProgram, type SqlRow, type SqlValue } from "../db/sql.js";
import { claimFollowers, EARLIER_PENDING, headOf, mayGo, putOff } from "./outbox-order.js";
import {
  CLAIMED_COLUMNS,
  claimedEvent,
  dateOf,
  EVENT,
  type ClaimedRun,
  type DeliveryTarget,
  type DueEvent,
  type PollInput,
  type PollResult,
} from "./outbox-rows.js";

// A poll of the outbox: which due events go now, and their claim.

const TARGETS_SQL = `SELECT "id", "webhookUrl", "webhookPrivateKey", "clockOffsetSeconds"
  FROM "Platform" WHERE "webhookUrl" IS NOT NULL`;

const DUE_SQL = `SELECT e."id", e."objectId", e."nextAttemptAt",
    ${EARLIER_PENDING("e")} AS "blocked"
  FROM ${EVENT} e
  WHERE e."platformId" = ? AND e."status" = 'PENDING' AND e."nextAttemptAt" <= ?
    AND (e."lockedUntil" IS NULL OR e."lockedUntil" < ?)
  ORDER BY e."nextAttemptAt" LIMIT ?`;

const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ");

/**
 * The claim of the chosen events. A row whose lease is live, that is no
 * longer due, or that has an earlier pending event of its object does not
 * match: of two processes racing for an event exactly one gets it, and an
 * object's order holds even if an earlier event became pending again (a
 * replay) since the poll read it.
 *
 * The status test is written so that no index can serve it: with it
 * indexable, SQLite reads the claim's few ids through the due index (every
 * due event) instead of the primary key. On PostgreSQL the rows are chosen
 * under row locks that skip (SKIP_LOCKED): a row another process is claiming
 * or recording is left to it, so a poll never waits for a lock and takes
 * part in no deadlock.
 */
const claimSql = (n: number) => `UPDATE ${EVENT} SET "lockedUntil" = ?, "lockedBy" = ?
  WHERE "id" IN (SELECT c."id" FROM ${EVENT} c
    WHERE c."id" IN (${placeholders(n)}) AND (c."status" || '') = 'PENDING'
      AND c."nextAttemptAt" <= ? AND (c."lockedUntil" IS NULL OR c."lockedUntil" < ?)
      AND NOT ${EARLIER_PENDING("c")} ${SKIP_LOCKED})
  RETURNING ${CLAIMED_COLUMNS}`;

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
