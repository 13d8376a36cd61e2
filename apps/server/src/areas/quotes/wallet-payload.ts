import { Activity } from "../../signing/activities.js";
import { payloadToSign } from "../../signing/challenges.js";
import type { QuoteRow } from "./records.js";

type PayloadFields = Pick<
  QuoteRow,
  | "id"
  | "platformId"
  | "sourceAccountId"
  | "destination"
  | "sendingCurrency"
  | "receivingCurrency"
  | "sendingAmount"
  | "receivingAmount"
  | "expiresAt"
  | "createdAt"
>;

/**
 * What the source wallet signs to execute a quote, made once with the quote:
 * the quote, who pays and who is paid, both amounts, when it was priced and
 * until when. A stamp over one quote's payload verifies over no other's. It
 * is good exactly as long as the quote (`expiresAt`, bound here): an expired
 * quote does not execute, and an executed one does not execute again, so the
 * quote's own state makes each stamp single-use.
 */
export function executeQuotePayload(quote: PayloadFields): string {
  return payloadToSign(
    quote.platformId,
    Activity.EXECUTE_QUOTE,
    {
      quoteId: quote.id,
      sourceAccountId: quote.sourceAccountId,
      destination: JSON.parse(quote.destination) as unknown,
      // Minor units, as strings: exact whatever their size.
      sendingAmount: String(quote.sendingAmount),
      sendingCurrency: quote.sendingCurrency,
      receivingAmount: String(quote.receivingAmount),
      receivingCurrency: quote.receivingCurrency,
      expiresAt: quote.expiresAt.toISOString(),
    },
    quote.createdAt,
  );
}
