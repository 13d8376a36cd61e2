import type { Schemas } from "@sandbox/client";
import { one, q, type Row } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { emitEvent } from "../../events/outbox.js";

export type Quote = Schemas["Quote"];
export type QuoteStatus = Schemas["QuoteStatus"];
export type QuoteRow = Row<"Quote">;

function majorUnits(amount: bigint): string {
  // Every sandbox currency has 2 decimals (see exchange-rates.ts).
  const cents = amount % 100n;
  return `${amount / 100n}.${cents.toString().padStart(2, "0")}`;
}

export function toQuote(row: QuoteRow): Quote {
  const instructions: Pick<Quote, "paymentInstructions"> =
    row.paymentReference !== null
      ? {
          paymentInstructions: {
            currency: row.sendingCurrency,
            amount: Number(row.sendingAmount),
            reference: row.paymentReference,
            description: `Pay exactly ${majorUnits(row.sendingAmount)} ${row.sendingCurrency} quoting reference ${row.paymentReference} before ${row.expiresAt.toISOString()}.`,
          },
        }
      : {};
  return {
    id: row.id,
    status: row.status as QuoteStatus,
    source: JSON.parse(row.source) as Quote["source"],
    destination: JSON.parse(row.destination) as Quote["destination"],
    sendingCurrency: row.sendingCurrency,
    receivingCurrency: row.receivingCurrency,
    sendingAmount: Number(row.sendingAmount),
    receivingAmount: Number(row.receivingAmount),
    exchangeRate: Number(row.exchangeRate),
    feeAmount: Number(row.feeAmount),
    expiresAt: row.expiresAt.toISOString(),
    ...instructions,
    ...(row.transactionId !== null ? { transactionId: row.transactionId } : {}),
    createdAt: row.createdAt.toISOString(),
  };
}

/** Another request or job moved the quote first. */
export class StaleQuoteError extends Error {
  constructor(readonly quoteId: string) {
    super(`quote ${quoteId} changed concurrently`);
  }
}

/**
 * Moves a quote on from the status `row` shows (a conditional update, so two
 * movers cannot both apply) and emits QUOTE.STATUS_CHANGE with it.
 */
export function* moveQuote(
  row: QuoteRow,
  status: QuoteStatus,
  at: Date,
  extra: { transactionId?: string; notExpiredAt?: Date } = {},
): SqlProgram<QuoteRow> {
  let update = q
    .updateTable("Quote")
    .set({
      status,
      updatedAt: at,
      ...(extra.transactionId ? { transactionId: extra.transactionId } : {}),
    })
    .where("id", "=", row.id)
    .where("status", "=", row.status);
  if (extra.notExpiredAt) update = update.where("expiresAt", ">", extra.notExpiredAt);
  const updated = yield* one(update.returningAll());
  if (!updated) throw new StaleQuoteError(row.id);
  if (updated.status !== row.status) {
    yield* emitEvent({
      platformId: updated.platformId,
      type: "QUOTE.STATUS_CHANGE",
      objectId: updated.id,
      data: toQuote(updated),
      at,
    });
  }
  return updated;
}
