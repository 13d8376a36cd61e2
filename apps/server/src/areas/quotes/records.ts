import type { Schemas } from "@payments-sandbox/client";
import { one, q, type Row } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { payToInstructions } from "../internal-accounts/funding-instructions.js";
import { currencyInfo } from "./exchange-rates.js";

/** A challenge issued, spent or answered with a quote's move. */
export interface ScaChange {
  scaChallengeId?: string | null;
  scaFactor?: string | null;
  scaExpiresAt?: Date | null;
  scaAttempts?: number;
}

export type Quote = Schemas["Quote"];
export type QuoteStatus = Quote["status"];
export type QuoteRow = Row<"Quote">;

function majorUnits(amount: bigint): string {
  // Every sandbox currency has 2 decimals (see exchange-rates.ts).
  const cents = amount % 100n;
  return `${amount / 100n}.${cents.toString().padStart(2, "0")}`;
}

/**
 * How the quote is paid: from an embedded wallet, the payload its session
 * key stamps for `POST /quotes/{quoteId}/execute`; for real-time funding,
 * where the sender pays, once nothing withholds it.
 */
function instructionsOf(row: QuoteRow): Pick<Quote, "paymentInstructions"> {
  if (row.payloadToSign !== null) {
    return {
      paymentInstructions: [
        {
          instructionsNotes:
            "Stamp payloadToSign, byte for byte, with a session key of the source wallet and send the stamp in Service-Wallet-Signature on POST /quotes/{quoteId}/execute.",
          isPlatformAccount: false,
          accountOrWalletInfo: { accountType: "EMBEDDED_WALLET", payloadToSign: row.payloadToSign },
        },
      ],
    };
  }
  if (row.paymentReference === null || row.status === "PENDING_AUTHORIZATION") return {};
  return {
    paymentInstructions: payToInstructions({
      key: row.id,
      currency: row.sendingCurrency,
      reference: row.paymentReference,
      isPlatformAccount: false,
      notes: `Pay exactly ${majorUnits(row.sendingAmount)} ${row.sendingCurrency} quoting reference ${row.paymentReference} before ${row.expiresAt.toISOString()}.`,
    }),
  };
}

export function toQuote(row: QuoteRow): Quote {
  return {
    id: row.id,
    status: row.status as QuoteStatus,
    createdAt: row.createdAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
    source: JSON.parse(row.source) as Quote["source"],
    destination: JSON.parse(row.destination) as Quote["destination"],
    sendingCurrency: currencyInfo(row.sendingCurrency) ?? { code: row.sendingCurrency },
    receivingCurrency: currencyInfo(row.receivingCurrency) ?? { code: row.receivingCurrency },
    totalSendingAmount: Number(row.sendingAmount),
    totalReceivingAmount: Number(row.receivingAmount),
    exchangeRate: Number(row.exchangeRate),
    feesIncluded: Number(row.feeAmount),
    // The sandbox's platforms configure no fees of their own.
    platformFeesIncluded: 0,
    ...instructionsOf(row),
    transactionId: row.transactionId ?? "",
    ...(row.scaChallengeId !== null && row.status === "PENDING_AUTHORIZATION"
      ? {
          scaChallenge: {
            id: row.scaChallengeId,
            expiresAt: (row.scaExpiresAt ?? row.expiresAt).toISOString(),
            factor: (row.scaFactor ?? "SMS_OTP") as NonNullable<Quote["scaChallenge"]>["factor"],
            availableFactors: ["SMS_OTP"],
            purpose: "PAYMENT",
          },
        }
      : {}),
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
 * movers cannot both apply). Its transaction's events tell the partner.
 */
export function* moveQuote(
  row: QuoteRow,
  status: QuoteStatus,
  at: Date,
  extra: { notExpiredAt?: Date; sca?: ScaChange } = {},
): SqlProgram<QuoteRow> {
  let update = q
    .updateTable("Quote")
    .set({
      status,
      updatedAt: at,
      ...(extra.sca ?? {}),
    })
    .where("id", "=", row.id)
    .where("status", "=", row.status);
  if (extra.notExpiredAt) update = update.where("expiresAt", ">", extra.notExpiredAt);
  const updated = yield* one(update.returningAll());
  if (!updated) throw new StaleQuoteError(row.id);
  return updated;
}
