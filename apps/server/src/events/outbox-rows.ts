import type { SqlProgram, SqlRow } from "../db/sql.js";

// The outbox's rows as the webhook dispatcher's programs read and write them
// (outbox-store.ts): what a poll claims, what a delivery's outcome records,
// and the reads and writes of single events that several programs share.

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

/** A due event as a poll reads it. */
export interface DueEvent {
  id: string;
  platformId: string;
  objectId: string;
  nextAttemptAt: Date;
  /** An earlier event of the same object is still pending: not its turn. */
  blocked: boolean;
}

/** The outbox table, as statements name it. */
export const EVENT = `"WebhookEvent"`;

/** What a claim returns of each event (see claimedEvent). */
export const CLAIMED_COLUMNS = `"id", "platformId", "objectId", "seq", "payload", "attemptCount",
  "replayCount", "firstAttemptAt"`;

/** A date as read: SQLite holds Prisma's ISO text, PostgreSQL's driver gives a Date. */
export function dateOf(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

export function optionalDate(value: unknown): Date | null {
  return value === null || value === undefined ? null : dateOf(value);
}

/** A claimed row as the event the dispatcher sends, with its platform from `targets`. */
export function claimedEvent(row: SqlRow, targets: Map<string, DeliveryTarget>): ClaimedEvent {
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

/** Gives a claimed event back untouched, if the claim still holds it. */
export function* releaseWebhookEvent(input: { id: string; token: string }): SqlProgram<void> {
  yield {
    kind: "run",
    sql: `UPDATE ${EVENT} SET "lockedUntil" = NULL, "lockedBy" = NULL
      WHERE "id" = ? AND "lockedBy" = ?`,
    params: [input.id, input.token],
  };
}
