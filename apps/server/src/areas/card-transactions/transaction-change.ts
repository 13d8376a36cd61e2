/**
 * One change to an existing card transaction (a clearing, a return, an
 * increment, a reversal, an advice, a pull's resolution): claims the row's
 * version (so concurrent changes to one transaction apply one after the
 * other, on both databases), runs the change's program to move money and
 * update the progress, records the child events, saves, and emits the event
 * of the resulting status with the whole parent. Each kind of change only
 * says what it does to the progress (clearing.ts, returns.ts, adjustments.ts,
 * pull-job.ts).
 */
import type { Database } from "../../db/database.js";
import { insertAll, one, q, rowOf, run, type Row as RowOf } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { ApiError, notFound } from "../../errors.js";
import { emitEvent } from "../../events/outbox.js";
import { newId } from "../../ids.js";
import { amountOutOfRange, inAmountRange } from "../ledger/amount-range.js";
import {
  EVENT_OF_STATUS,
  toCardTransaction,
  type CardTransaction,
  type CardTransactionStatus,
} from "./view.js";

type Row = RowOf<"CardTransaction">;

type ChildKind = "PULL" | "SETTLEMENT" | "REFUND" | "RELEASE";
/** REVERSED: a refund that a return reversal took back. */
type ChildStatus = "PENDING" | "CONFIRMED" | "FAILED" | "REVERSED";
export interface ChildEvent {
  kind: ChildKind;
  amount: bigint;
  status: ChildStatus;
}

/** The parts of a transaction that its child events change. */
export type Progress = Pick<
  Row,
  | "authorizedAmount"
  | "heldAmount"
  | "settledAmount"
  | "refundedAmount"
  | "pullCount"
  | "pullTotal"
  | "pullPending"
  | "settlementCount"
  | "settlementTotal"
  | "refundCount"
  | "refundTotal"
> & { status: CardTransactionStatus };

/**
 * What one change does: moves money and updates `next`, answering the child
 * events to record. It may throw an ApiError (nothing is kept) or answer
 * "skip" (nothing is kept, and the transaction is answered as it was).
 */
export type ChangeOp = (row: Row, next: Progress) => SqlProgram<ChildEvent[] | "skip">;

function progressOf(row: Row): Progress {
  return {
    status: row.status as CardTransactionStatus,
    authorizedAmount: row.authorizedAmount,
    heldAmount: row.heldAmount,
    settledAmount: row.settledAmount,
    refundedAmount: row.refundedAmount,
    pullCount: row.pullCount,
    pullTotal: row.pullTotal,
    pullPending: row.pullPending,
    settlementCount: row.settlementCount,
    settlementTotal: row.settlementTotal,
    refundCount: row.refundCount,
    refundTotal: row.refundTotal,
  };
}

/** The progress amounts that the transaction's views carry: each must stay in the API's range. */
const CARRIED_AMOUNTS = [
  "authorizedAmount",
  "heldAmount",
  "settledAmount",
  "refundedAmount",
  "pullTotal",
  "settlementTotal",
  "refundTotal",
] as const satisfies readonly (keyof Progress)[];

/** Refuses a change whose totals would leave the range (the view could not be answered). */
function requireAmountsInRange(next: Progress): void {
  for (const field of CARRIED_AMOUNTS) {
    if (!inAmountRange(next[field])) {
      throw amountOutOfRange(`This change would take the transaction's ${field} out of range`, {
        field,
      });
    }
  }
}

const later = (a: Date, b: Date) => (a.getTime() >= b.getTime() ? a : b);

class Skip extends Error {}

/**
 * Applies `op` to the platform's transaction `id` (on `cardId`, when given):
 * 404 when there is none, 409 CONFLICT when it kept changing under it.
 */
export async function changeTransaction(
  data: Database,
  platformId: string,
  id: string,
  cardId: string | undefined,
  at: Date,
  op: ChangeOp,
): Promise<CardTransaction> {
  let read = q
    .selectFrom("CardTransaction")
    .selectAll()
    .where("id", "=", id)
    .where("platformId", "=", platformId);
  if (cardId) read = read.where("cardId", "=", cardId);
  for (let attempt = 0; attempt < 8; attempt++) {
    const row = await data.one(read);
    if (!row) throw notFound("TRANSACTION_NOT_FOUND", `Card transaction ${id} not found`);
    try {
      const saved = await data.transaction(() => applyChange(row, at, op));
      if (saved) return toCardTransaction(saved);
    } catch (err) {
      if (err instanceof Skip) return toCardTransaction(row);
      throw err;
    }
  }
  throw new ApiError(409, "CONFLICT", "The card transaction kept changing; retry the request");
}

/**
 * The change as one transaction: claims the version that was read (undefined
 * when another change came first), then applies `op`, records the child
 * events, saves the progress and emits the event of the resulting status.
 */
function* applyChange(row: Row, at: Date, op: ChangeOp): SqlProgram<Row | undefined> {
  const claimed = yield* run(
    q
      .updateTable("CardTransaction")
      .set((eb) => ({ version: eb("version", "+", 1) }))
      .where("id", "=", row.id)
      .where("version", "=", row.version),
  );
  if (claimed !== 1) return undefined;
  const next = progressOf(row);
  const children = yield* op(row, next);
  if (children === "skip") throw new Skip();
  requireAmountsInRange(next);
  yield* insertAll(
    children.map((child) =>
      rowOf("CardTransactionEvent", {
        id: newId("CardTransactionEvent"),
        platformId: row.platformId,
        cardTransactionId: row.id,
        ...child,
        createdAt: at,
        updatedAt: at,
      }),
    ),
  );
  const stamp = later(at, row.lastEventAt);
  const updated = yield* one(
    q
      .updateTable("CardTransaction")
      .set({ ...next, lastEventAt: stamp, updatedAt: later(at, row.updatedAt) })
      .where("id", "=", row.id)
      .returningAll(),
  );
  if (!updated) throw new Error(`card transaction ${row.id} disappeared`);
  yield* emitEvent({
    platformId: row.platformId,
    type: EVENT_OF_STATUS[updated.status as CardTransactionStatus],
    objectId: row.id,
    data: toCardTransaction(updated),
    at: stamp,
  });
  return updated;
}
