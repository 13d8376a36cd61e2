import type { Schemas } from "@payments-sandbox/client";
import type { Row } from "../../db/query.js";

export type CardRow = Row<"Card">;

export type Card = Schemas["Card"];
export type CardState = Schemas["CardState"];
export type CardStateReason = Schemas["CardStateReason"];

export function fundingSourcesOf(row: CardRow): string[] {
  return JSON.parse(row.fundingSources) as string[];
}

/** The API view of a card row; optional fields are omitted, never null. */
export function toCard(row: CardRow): Card {
  return {
    id: row.id,
    cardholderId: row.cardholderId,
    ...(row.platformCardId !== null ? { platformCardId: row.platformCardId } : {}),
    state: row.state as CardState,
    ...(row.stateReason !== null ? { stateReason: row.stateReason as CardStateReason } : {}),
    brand: row.brand as Schemas["CardBrand"],
    form: row.form as Card["form"],
    last4: row.last4,
    expMonth: row.expMonth,
    expYear: row.expYear,
    fundingSources: fundingSourcesOf(row),
    maxSpendPerTransaction:
      row.maxSpendPerTransaction === null ? null : Number(row.maxSpendPerTransaction),
    currency: row.currency,
    processorRef: row.processorRef,
    issuerRef: row.issuerRef,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
