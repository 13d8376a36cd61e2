import type { Schemas } from "@sandbox/client";
import { insert, one, q, type Row } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { emitEvent } from "../../events/outbox.js";
import { newId } from "../../ids.js";

// The one place that writes Transaction rows: every creation and status change
// emits TRANSACTION.STATUS_CHANGE in the caller's database transaction.
// Callers write each transaction once per database transaction, with the
// status it ends that transaction in, so one object never gets two events
// with the same timestamp (whose order a receiver could not tell).

export type Transaction = Schemas["Transaction"];
export type TransactionStatus = Schemas["TransactionStatus"];
export type TransactionType = Schemas["TransactionType"];
export type TransactionRow = Row<"Transaction">;

export function toTransaction(row: TransactionRow): Transaction {
  return {
    id: row.id,
    type: row.type as TransactionType,
    status: row.status as TransactionStatus,
    ...(row.failureReason !== null ? { failureReason: row.failureReason } : {}),
    ...(row.internalAccountId !== null ? { internalAccountId: row.internalAccountId } : {}),
    ...(row.externalAccountId !== null ? { externalAccountId: row.externalAccountId } : {}),
    ...(row.quoteId !== null ? { quoteId: row.quoteId } : {}),
    ...(row.customerId !== null ? { customerId: row.customerId } : {}),
    ...(row.agentId !== null ? { agentId: row.agentId } : {}),
    amount: Number(row.amount),
    currency: row.currency,
    direction: row.direction as Transaction["direction"],
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...(row.completedAt !== null ? { completedAt: row.completedAt.toISOString() } : {}),
  };
}

export interface NewTransaction {
  platformId: string;
  type: TransactionType;
  status: TransactionStatus;
  direction: Transaction["direction"];
  amount: bigint;
  currency: string;
  internalAccountId?: string | null;
  externalAccountId?: string | null;
  quoteId?: string | null;
  customerId?: string | null;
  agentId?: string | null;
  failureReason?: string | null;
  /** Outcome steps already applied by the request that creates it. */
  stepsApplied?: number;
  /** When it completed, if it did (a payment can complete and later fail). */
  completedAt?: Date | null;
}

export function* createTransaction(input: NewTransaction, at: Date): SqlProgram<TransactionRow> {
  const row: TransactionRow = {
    id: newId("Transaction"),
    platformId: input.platformId,
    type: input.type,
    status: input.status,
    direction: input.direction,
    amount: input.amount,
    currency: input.currency,
    internalAccountId: input.internalAccountId ?? null,
    externalAccountId: input.externalAccountId ?? null,
    quoteId: input.quoteId ?? null,
    customerId: input.customerId ?? null,
    agentId: input.agentId ?? null,
    failureReason: input.failureReason ?? null,
    stepsApplied: input.stepsApplied ?? 0,
    createdAt: at,
    updatedAt: at,
    completedAt: input.completedAt ?? (input.status === "COMPLETED" ? at : null),
  };
  yield* insert("Transaction", row);
  yield* announce(row, at);
  return row;
}

/** Another request or job moved the transaction first; the caller's work is void. */
export class StaleTransactionError extends Error {
  constructor(readonly transactionId: string) {
    super(`transaction ${transactionId} changed concurrently`);
  }
}

export interface TransactionChange {
  status: TransactionStatus;
  /** Set with a COMPLETED that is not the final status (completed, then failed). */
  completed?: boolean;
  failureReason?: string;
  /** Set when a sandbox outcome step has been applied. */
  stepsApplied?: number;
}

/**
 * Moves a transaction on from the state `row` shows. The update is
 * conditional on that state, so two movers (a job and an approval, two
 * workers) can never both apply: the loser gets StaleTransactionError and its
 * database transaction rolls back.
 */
export function* moveTransaction(
  row: TransactionRow,
  change: TransactionChange,
  at: Date,
): SqlProgram<TransactionRow> {
  const updated = yield* one(
    q
      .updateTable("Transaction")
      .set({
        status: change.status,
        ...(change.failureReason !== undefined ? { failureReason: change.failureReason } : {}),
        ...(change.stepsApplied !== undefined ? { stepsApplied: change.stepsApplied } : {}),
        ...((change.status === "COMPLETED" || change.completed === true) && row.completedAt === null
          ? { completedAt: at }
          : {}),
        updatedAt: at,
      })
      .where("id", "=", row.id)
      .where("status", "=", row.status)
      .where("stepsApplied", "=", row.stepsApplied)
      .returningAll(),
  );
  if (!updated) throw new StaleTransactionError(row.id);
  if (updated.status !== row.status) yield* announce(updated, at);
  return updated;
}

function* announce(row: TransactionRow, at: Date): SqlProgram<void> {
  yield* emitEvent({
    platformId: row.platformId,
    type: "TRANSACTION.STATUS_CHANGE",
    objectId: row.id,
    data: toTransaction(row),
    at,
  });
}
