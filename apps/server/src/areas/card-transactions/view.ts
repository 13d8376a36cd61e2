import { randomUUID } from "node:crypto";
import type { Schemas } from "@payments-sandbox/client";
import type { Row } from "../../db/query.js";
import type { WebhookEventType } from "../../events/outbox.js";
import { currencyAmount } from "../quotes/exchange-rates.js";

type CardTransactionRow = Row<"CardTransaction">;

export type CardTransaction = Schemas["CardTransaction"];
export type CardTransactionStatus = Schemas["CardTransactionStatus"];
export type CardDeclineReason = Schemas["CardDeclineReason"];
/** A declined simulation's answer: production keeps no transaction for a decline. */
export type CardDecline = Schemas["SandboxCardDecline"];
/** What a simulation that authorizes something new answers. */
export type CardAuthorizationResult = Schemas["SandboxCardAuthorizationResult"];

/** The event each status is announced with (the parent is the event's data). */
export const EVENT_OF_STATUS: Record<CardTransactionStatus, WebhookEventType> = {
  AUTHORIZED: "CARD_TRANSACTION.AUTHORIZED",
  PARTIALLY_SETTLED: "CARD_TRANSACTION.PARTIALLY_SETTLED",
  SETTLED: "CARD_TRANSACTION.SETTLED",
  REFUNDED: "CARD_TRANSACTION.REFUNDED",
  EXCEPTION: "CARD_TRANSACTION.EXCEPTION",
};

/** A decline, with a fresh issuer token as production's simulation answers one. */
export function cardDecline(cardId: string, declineReason: CardDeclineReason, reason: string) {
  const decline: CardDecline = {
    issuerTransactionToken: randomUUID(),
    cardId,
    declineReason,
    reason,
  };
  return decline;
}

export function toCardTransaction(row: CardTransactionRow): CardTransaction {
  return {
    type: "CARD",
    id: row.id,
    cardId: row.cardId,
    customerId: row.customerId,
    platformCustomerId: row.platformCustomerId ?? row.customerId,
    // The issuer's token for the purchase: the id's UUID, stable across its events.
    issuerTransactionToken: row.id.slice(row.id.indexOf(":") + 1),
    status: row.status as CardTransactionStatus,
    // A purchase or withdrawal takes money out of the account the card draws
    // on; a credit authorization brings money into it.
    direction: row.direction === "CREDIT" ? "CREDIT" : "DEBIT",
    merchant: {
      descriptor: row.merchantDescriptor,
      ...(row.merchantMcc !== null ? { mcc: row.merchantMcc } : {}),
      ...(row.merchantCountry !== null ? { country: row.merchantCountry } : {}),
    },
    authorizedAmount: currencyAmount(row.authorizedAmount, row.currency),
    settledAmount: currencyAmount(row.settledAmount, row.currency),
    refundedAmount: currencyAmount(row.refundedAmount, row.currency),
    accountId: row.fundingSourceId ?? "",
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
