import type { Schemas } from "@payments-sandbox/client";
import { sharedMemory } from "../db/shared-memory.js";
import type { SqlInsert, SqlProgram } from "../db/sql.js";
import { newId } from "../ids.js";

export type WebhookEventType = Schemas["WebhookEventType"];

export interface EventInput {
  /** The event id, when the caller needs it before the event exists; a fresh one otherwise. */
  id?: string;
  platformId: string;
  type: WebhookEventType;
  /** The id of the object the event is about (delivery order is per object). */
  objectId: string;
  /** The envelope's `data`: the whole object as the API returns it. */
  data: unknown;
  /** Platform (sandbox clock) time of the change. */
  at: Date;
}

// A lower bound of an event's seq. The insert raises it above its object's
// last event, in the order the transactions commit (SqlOrder, db/sql-steps.ts);
// most objects have one event, or events far apart, and keep it. Within one
// process it is strictly increasing; across processes it follows real time
// (1024 slots per millisecond). The last value lives in shared memory so
// that the SQLite writer thread (db/sqlite-writer-thread.ts) and the main
// thread draw from one sequence (db/shared-memory.ts).
const lastSeq = new BigInt64Array(sharedMemory("eventSequence", 8));
function nextSeq(): bigint {
  const fromClock = BigInt(Date.now()) * 1024n;
  for (;;) {
    const last = Atomics.load(lastSeq, 0);
    const next = fromClock > last ? fromClock : last + 1n;
    if (Atomics.compareExchange(lastSeq, 0, last, next) === last) return next;
  }
}

type EmitListener = () => void;
const listeners = new Set<EmitListener>();

/** The envelope as sent and signed, with `timestamp` spelled as given. */
function envelopeText(id: string, event: EventInput, timestamp: string): string {
  return JSON.stringify({ id, type: event.type, timestamp, data: event.data });
}

function eventRow(event: EventInput, payload: (id: string) => string) {
  const id = event.id ?? newId("Webhook");
  return {
    id,
    platformId: event.platformId,
    type: event.type,
    objectId: event.objectId,
    seq: nextSeq(),
    // Stored as the exact bytes that are signed and sent, every time.
    payload: payload(id),
    createdAt: event.at,
    status: "PENDING",
    // Real time: the dispatcher compares against the real clock.
    nextAttemptAt: new Date(),
  };
}

/**
 * The row of an event with `at` as its `timestamp`, written as is: for an
 * event that is its own object and is sent before it is stored (a TEST
 * event), so no other event of its object can come before or after it.
 */
export function outboxRow(event: EventInput) {
  return eventRow(event, (id) => envelopeText(id, event, event.at.toISOString()));
}

/**
 * The insert of an event (shared by emitEvent and the SQL hot paths). It
 * takes its place among its object's events as it is written (SqlOrder): its
 * seq, its createdAt and the envelope's `timestamp`, at least `at`, come
 * after those of every event of the object whose transaction committed
 * before this one, and before those of every one that commits after it.
 * Delivery, the event list and the timestamps all follow that order, which
 * is the order of the changes (each made under its object's row lock).
 */
export function outboxInsert(event: EventInput): SqlInsert & { row: ReturnType<typeof eventRow> } {
  // The envelope's timestamp is its first member that can hold this text.
  const row = eventRow(event, (id) =>
    envelopeText(id, event, "").replace(`"timestamp":""`, `"timestamp":"${TIME_MARK}"`),
  );
  return {
    table: "WebhookEvent",
    row,
    ordered: {
      platformId: row.platformId,
      objectId: row.objectId,
      seq: "seq",
      time: "createdAt",
      text: { column: "payload", token: TIME_MARK },
    },
  };
}
// A control character, which JSON text never holds unescaped: in the text it
// stands only where it was put.
const TIME_MARK = "\u0002";

/** Wakes the dispatcher after an event was written (see onEventEmitted). */
export function notifyEventEmitted(): void {
  for (const listener of listeners) listener();
}

/**
 * Tells `listener` (the dispatcher) that an event was just written, so it can
 * look sooner than its next poll. Returns the unsubscribe function.
 */
export function onEventEmitted(listener: EmitListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Records a webhook event in the outbox.
 *
 * The rule: call it inside the transaction that makes the state change, with
 * the object as the API returns it after the change. Then neither the change
 * nor its event exists without the other, and a crash or a receiver that is
 * down loses nothing: the dispatcher delivers from the table.
 */
export function* emitEvent(event: EventInput): SqlProgram<string> {
  const insert = outboxInsert(event);
  yield { kind: "insert", ...insert };
  // The nudge may arrive before the transaction commits; the dispatcher's
  // regular poll picks the event up then.
  notifyEventEmitted();
  return insert.row.id;
}
