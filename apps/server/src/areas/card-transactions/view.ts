import type { Schemas } from "@sandbox/client";
import type { Row } from "../../db/query.js";

type CardTransactionRow = Row<"CardTransaction">;
import type { WebhookEventType } from "../../events/outbox.js";

export type CardTransaction = Schemas["CardTransaction"];
export type CardTransactionStatus = Schemas["CardTransactionStatus"];
export type CardDeclineReason = Schemas["CardDeclineReason"];

/** The event each status is announced with (the parent is the event's data). */
export const EVENT_OF_STATUS: Record<CardTransactionStatus, WebhookEventType> = {
  AUTHORIZED: "CARD_TRANSACTION.AUTHORIZED",
  PARTIALLY_SETTLED: "CARD_TRANSACTION.PARTIALLY_SETTLED",
  SETTLED: "CARD_TRANSACTION.SETTLED",
  REFUNDED: "CARD_TRANSACTION.REFUNDED",
  EXCEPTION: "CARD_TRANSACTION.EXCEPTION",
  DECLINED: "CARD_TRANSACTION.DECLINED",
  EXPIRED: "CARD_TRANSACTION.EXPIRED",
  REVERSED: "CARD_TRANSACTION.REVERSED",
};

export function toCardTransaction(row: CardTransactionRow): CardTransaction {
  return {
    type: "CARD",
    id: row.id,
    cardId: row.cardId,
    customerId: row.customerId,
    status: row.status as CardTransactionStatus,
    ...(row.declineReason !== null
      ? { declineReason: row.declineReason as CardDeclineReason }
      : {}),
    merchant: {
      descriptor: row.merchantDescriptor,
      mcc: row.merchantMcc,
      country: row.merchantCountry,
    },
    currency: row.currency,
    authorizedAmount: Number(row.authorizedAmount),
    settledAmount: Number(row.settledAmount),
    refundedAmount: Number(row.refundedAmount),
    pullSummary: {
      count: row.pullCount,
      totalAmount: Number(row.pullTotal),
      pendingCount: row.pullPending,
    },
    settlementSummary: { count: row.settlementCount, totalAmount: Number(row.settlementTotal) },
    refundSummary: { count: row.refundCount, totalAmount: Number(row.refundTotal) },
    authorizedAt: row.authorizedAt.toISOString(),
    lastEventAt: row.lastEventAt.toISOString(),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
