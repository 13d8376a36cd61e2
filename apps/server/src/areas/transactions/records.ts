import type { Schemas } from "@payments-sandbox/client";
import type { RefundOutcome } from "@payments-sandbox/sandbox-rules";
import { all, insert, one, q, type Row } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { emitEvent, type WebhookEventType } from "../../events/outbox.js";
import { newId } from "../../ids.js";
import { currencyAmount } from "../quotes/exchange-rates.js";

// The one place that writes Transaction rows: every creation and status change
// emits INCOMING_PAYMENT.* or OUTGOING_PAYMENT.* in the caller's database
// transaction. Callers write each transaction once per database transaction,
// with the status it ends that transaction in, so one object never gets two
// status events with the same timestamp (whose order a receiver could not tell).

export type IncomingTransaction = Schemas["IncomingTransaction"];
export type OutgoingTransaction = Schemas["OutgoingTransaction"];
/** A money movement of an internal account, as the API shows it (not a card transaction). */
export type Transaction = IncomingTransaction | OutgoingTransaction;
export type TransactionStatus = Schemas["TransactionStatus"];
export type TransactionRow = Row<"Transaction">;

/**
 * What produced a transaction (the row's `type`); the API shows only its
 * direction. FUNDING is a sandbox top-up of an internal account.
 */
export type TransactionKind =
  "TRANSFER_IN" | "TRANSFER_OUT" | "QUOTE_PAYMENT" | "UMA_RECEIVE" | "QUOTE_RECEIVE" | "FUNDING";

/** The kinds that bring money in (QUOTE_RECEIVE: a quote paid into an internal account). */
export const INCOMING_KINDS = ["TRANSFER_IN", "UMA_RECEIVE", "QUOTE_RECEIVE", "FUNDING"] as const;
export const OUTGOING_KINDS = ["TRANSFER_OUT", "QUOTE_PAYMENT"] as const;
const INCOMING_KIND_SET: ReadonlySet<string> = new Set(INCOMING_KINDS);

export function isIncoming(row: Pick<TransactionRow, "type">): boolean {
  return INCOMING_KIND_SET.has(row.type);
}

/** Who the transaction belongs to: its customer, or (for the platform's own accounts) the platform. */
export interface Owner {
  customerId: string;
  platformCustomerId: string;
}

/** The query that reads the owners of rows (null when they all belong to the platform). */
export function ownersQuery(rows: readonly TransactionRow[]) {
  const customerIds = [...new Set(rows.flatMap((row) => row.customerId ?? []))];
  if (customerIds.length === 0) return null;
  return q
    .selectFrom("Customer")
    .select(["id", "platformCustomerId"])
    .where("id", "in", customerIds);
}

/** Each row's owner, given the customers ownersQuery read. */
export function ownersOf(
  rows: readonly TransactionRow[],
  customers: readonly { id: string; platformCustomerId: string }[],
): Map<string, Owner> {
  const byId = new Map(customers.map((c) => [c.id, c.platformCustomerId]));
  return new Map(
    rows.map((row) => {
      const customerId = row.customerId ?? row.platformId;
      return [row.id, { customerId, platformCustomerId: byId.get(customerId) ?? customerId }];
    }),
  );
}

function refundOf(row: TransactionRow): Schemas["Refund"] | undefined {
  if (row.refundStatus === null || row.refundedAt === null) return undefined;
  return {
    reference: `Refund:${row.id.slice(row.id.indexOf(":") + 1)}`,
    initiatedAt: row.refundedAt.toISOString(),
    ...(row.refundStatus === "COMPLETED" ? { settledAt: row.refundedAt.toISOString() } : {}),
    status: row.refundStatus as Schemas["Refund"]["status"],
    ...(row.refundReason !== null
      ? { reason: row.refundReason as NonNullable<Schemas["Refund"]["reason"]> }
      : {}),
  };
}

export function toTransaction(row: TransactionRow, owner: Owner): Transaction {
  const sent = currencyAmount(row.amount, row.currency);
  const received = currencyAmount(
    row.receivedAmount ?? row.amount,
    row.receivedCurrency ?? row.currency,
  );
  const refund = refundOf(row);
  const common = {
    id: row.id,
    status: row.status as TransactionStatus,
    customerId: owner.customerId,
    platformCustomerId: owner.platformCustomerId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...(row.completedAt !== null ? { settledAt: row.completedAt.toISOString() } : {}),
    ...(row.receiptDeliveryConfirmedAt !== null
      ? { receiptDeliveryConfirmedAt: row.receiptDeliveryConfirmedAt.toISOString() }
      : {}),
    ...(row.agentId !== null ? { agentId: row.agentId } : {}),
    ...(row.quoteId !== null ? { quoteId: row.quoteId } : {}),
    ...(row.exchangeRate !== null ? { exchangeRate: Number(row.exchangeRate) } : {}),
    ...(row.reference !== null ? { reconciliationInstructions: { reference: row.reference } } : {}),
    ...(row.description !== null ? { description: row.description } : {}),
    ...(refund ? { refund } : {}),
  };
  if (isIncoming(row)) {
    return {
      ...common,
      type: "INCOMING",
      direction: "CREDIT",
      destination: {
        destinationType: "ACCOUNT",
        accountId: row.internalAccountId ?? "",
        currency: row.currency,
      },
      ...(row.type === "TRANSFER_IN" && row.externalAccountId !== null
        ? {
            source: {
              sourceType: "ACCOUNT" as const,
              accountId: row.externalAccountId,
              currency: row.currency,
            },
          }
        : {}),
      ...(row.type === "UMA_RECEIVE" && row.umaAddress !== null
        ? {
            source: {
              sourceType: "UMA_ADDRESS" as const,
              umaAddress: row.umaAddress,
              currency: row.currency,
            },
          }
        : {}),
      sentAmount: sent,
      receivedAmount: received,
      ...(row.failureReason !== null
        ? { failureReason: row.failureReason as IncomingTransaction["failureReason"] }
        : {}),
    } as IncomingTransaction;
  }
  const destination =
    row.externalAccountId !== null
      ? {
          destinationType: "ACCOUNT" as const,
          accountId: row.externalAccountId,
          currency: received.currency.code,
        }
      : {
          destinationType: "UMA_ADDRESS" as const,
          umaAddress: row.umaAddress ?? "",
          currency: received.currency.code,
        };
  const source =
    row.internalAccountId !== null
      ? { sourceType: "ACCOUNT" as const, accountId: row.internalAccountId, currency: row.currency }
      : {
          sourceType: "REALTIME_FUNDING" as const,
          currency: row.currency,
          ...(row.customerId !== null ? { customerId: row.customerId } : {}),
        };
  return {
    ...common,
    status: row.status as OutgoingTransaction["status"],
    type: "OUTGOING",
    direction: "DEBIT",
    source,
    destination,
    sentAmount: sent,
    receivedAmount: received,
    ...(row.failureReason !== null
      ? { failureReason: row.failureReason as OutgoingTransaction["failureReason"] }
      : {}),
  } as OutgoingTransaction;
}

export interface NewTransaction {
  /** Chosen by the caller when another record names it first (a quote's transactionId). */
  id?: string | undefined;
  platformId: string;
  type: TransactionKind;
  status: TransactionStatus;
  amount: bigint;
  currency: string;
  internalAccountId?: string | null;
  externalAccountId?: string | null;
  umaAddress?: string | null;
  receivedAmount?: bigint | null;
  receivedCurrency?: string | null;
  exchangeRate?: string | null;
  reference?: string | null;
  description?: string | null;
  quoteId?: string | null;
  customerId?: string | null;
  agentId?: string | null;
  failureReason?: string | null;
  /** Set when it fails at once and gives money back (or fails to). */
  refund?: RefundOutcome | null;
  /** Outcome steps already applied by the request that creates it. */
  stepsApplied?: number;
  /** When it completed, if it did (a payment can complete and later fail). */
  completedAt?: Date | null;
}

export function* createTransaction(input: NewTransaction, at: Date): SqlProgram<TransactionRow> {
  const row: TransactionRow = {
    id: input.id ?? newId("Transaction"),
    platformId: input.platformId,
    type: input.type,
    status: input.status,
    direction: INCOMING_KIND_SET.has(input.type) ? "CREDIT" : "DEBIT",
    amount: input.amount,
    currency: input.currency,
    internalAccountId: input.internalAccountId ?? null,
    externalAccountId: input.externalAccountId ?? null,
    umaAddress: input.umaAddress ?? null,
    receivedAmount: input.receivedAmount ?? null,
    receivedCurrency: input.receivedCurrency ?? null,
    exchangeRate: input.exchangeRate ?? null,
    reference: input.reference ?? null,
    description: input.description ?? null,
    refundStatus: input.refund?.status ?? null,
    refundReason: input.refund?.reason ?? null,
    refundedAt: input.refund ? at : null,
    receiptDeliveryConfirmedAt: null,
    quoteId: input.quoteId ?? null,
    customerId: input.customerId ?? null,
    agentId: input.agentId ?? null,
    failureReason: input.failureReason ?? null,
    stepsApplied: input.stepsApplied ?? 0,
    // Set by the agents area when an agent's policy counts the movement.
    agentUsageAmount: null,
    agentUsageAt: null,
    createdAt: at,
    updatedAt: at,
    completedAt: input.completedAt ?? (input.status === "COMPLETED" ? at : null),
  };
  yield* insert("Transaction", row);
  yield* announce(row, at, true);
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
  /** A failure that gives the money back (or tries to). */
  refund?: RefundOutcome;
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
        ...(change.refund !== undefined
          ? {
              refundStatus: change.refund.status,
              refundReason: change.refund.reason,
              refundedAt: at,
            }
          : {}),
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
  if (updated.status !== row.status) yield* announce(updated, at, change.refund !== undefined);
  return updated;
}

/** Records when the platform delivered the receipt; not a status change, so no event. */
export function* confirmReceipt(
  row: TransactionRow,
  confirmedAt: Date,
  at: Date,
): SqlProgram<TransactionRow> {
  const updated = yield* one(
    q
      .updateTable("Transaction")
      .set({ receiptDeliveryConfirmedAt: confirmedAt, updatedAt: at })
      .where("id", "=", row.id)
      .returningAll(),
  );
  if (!updated) throw new StaleTransactionError(row.id);
  return updated;
}

/** The event of a status: incoming payments have no authorization or processing events of their own. */
function statusEvent(row: TransactionRow): WebhookEventType {
  if (!isIncoming(row)) return `OUTGOING_PAYMENT.${row.status}` as WebhookEventType;
  const status = row.status === "COMPLETED" || row.status === "FAILED" ? row.status : "PENDING";
  return `INCOMING_PAYMENT.${status}`;
}

function* announce(row: TransactionRow, at: Date, withRefund: boolean): SqlProgram<void> {
  const query = ownersQuery([row]);
  const customers = query ? yield* all(query) : [];
  const data = toTransaction(row, ownersOf([row], customers).get(row.id)!);
  yield* emitEvent({
    platformId: row.platformId,
    type: statusEvent(row),
    objectId: row.id,
    data,
    at,
  });
  if (withRefund && row.refundStatus !== null) {
    // The refund follows the failure: a millisecond later, so the order is plain.
    const direction = isIncoming(row) ? "INCOMING_PAYMENT" : "OUTGOING_PAYMENT";
    yield* emitEvent({
      platformId: row.platformId,
      type: `${direction}.REFUND_${row.refundStatus}` as WebhookEventType,
      objectId: row.id,
      data,
      at: new Date(at.getTime() + 1),
    });
  }
}
