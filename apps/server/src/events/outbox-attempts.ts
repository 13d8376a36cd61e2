import type { SqlProgram, SqlRow } from "../db/sql.js";
import { wakeSuccessor } from "./outbox-order.js";
import { EVENT, releaseWebhookEvent, type AttemptRecord } from "./outbox-rows.js";

// The outcomes of deliveries, recorded; and the claims of processes that are
// gone, given back.

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
