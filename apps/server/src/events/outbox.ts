import type { Schemas } from "@payments-sandbox/client";
import { insert } from "../db/query.js";
import type { SqlProgram } from "../db/sql.js";
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

// Emission order. Within one process it is strictly increasing; across
// processes it follows real time (1024 slots per millisecond), which is what
// orders two changes of one object: their transactions are serialised by the
// object's row, so the second emits after the first. The last value lives in
// shared memory so that the SQLite writer thread (db/sqlite-writer-thread.ts)
// and the main thread draw from one sequence.
let lastSeq = new BigInt64Array(new SharedArrayBuffer(8));
function nextSeq(): bigint {
  const fromClock = BigInt(Date.now()) * 1024n;
  for (;;) {
    const last = Atomics.load(lastSeq, 0);
    const next = fromClock > last ? fromClock : last + 1n;
    if (Atomics.compareExchange(lastSeq, 0, last, next) === last) return next;
  }
}

/** The memory behind the event sequence, for another thread of this process to share. */
export function eventSequenceMemory(): SharedArrayBuffer {
  return lastSeq.buffer as SharedArrayBuffer;
}

/** Draws event sequence numbers from memory shared with the thread that made it. */
export function shareEventSequence(memory: SharedArrayBuffer): void {
  lastSeq = new BigInt64Array(memory);
}

type EmitListener = () => void;
const listeners = new Set<EmitListener>();

/** The outbox row of an event (shared by emitEvent and the SQL hot paths). */
export function outboxRow(event: EventInput) {
  const id = event.id ?? newId("Webhook");
  const envelope = { id, type: event.type, timestamp: event.at.toISOString(), data: event.data };
  return {
    id,
    platformId: event.platformId,
    type: event.type,
    objectId: event.objectId,
    seq: nextSeq(),
    // Stored as the exact bytes that are signed and sent, every time.
    payload: JSON.stringify(envelope),
    createdAt: event.at,
    status: "PENDING",
    // Real time: the dispatcher compares against the real clock.
    nextAttemptAt: new Date(),
  };
}

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
  const row = outboxRow(event);
  yield* insert("WebhookEvent", row);
  // The nudge may arrive before the transaction commits; the dispatcher's
  // regular poll picks the event up then.
  notifyEventEmitted();
  return row.id;
}
