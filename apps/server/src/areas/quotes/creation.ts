import { randomInt } from "node:crypto";
import { ApiError, invalidInput } from "../../errors.js";
import { insert } from "../../db/query.js";
import type { RequestContext, Services } from "../../http/context.js";
import { newId } from "../../ids.js";
import { scheduleJob } from "../../jobs/schedule.js";
import { checkMovement, requirePermission } from "../agents/policy.js";
import { amountOutOfRange, inAmountRange } from "../ledger/amount-range.js";
import { requireLookupOf } from "../receiver/lookups.js";
import { paymentNeedsSca } from "../sca/requirement.js";
import { newChallenge } from "./challenge.js";
import { quoteAmounts, rateAsNumber, rateFor, SUPPORTED_CURRENCIES } from "./exchange-rates.js";
import { inBody, type QuoteParties, type QuoteRequest } from "./parties.js";
import { QUOTE_EXPIRY_JOB, type QuotePayments } from "./payment.js";
import type { QuoteRow } from "./records.js";
import { executeQuotePayload } from "./wallet-payload.js";

/** How long a quote's price holds. */
export const QUOTE_LOCK_SECONDS = 300;

const REFERENCE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
function paymentReference(): string {
  const pick = () => REFERENCE_ALPHABET[randomInt(REFERENCE_ALPHABET.length)];
  const group = () => Array.from({ length: 4 }, pick).join("");
  return `QT-${group()}-${group()}`;
}

/** A new quote: its parties resolved, its price locked, its transaction opened and its expiry due. */
export class QuoteCreation {
  constructor(
    private readonly services: Services,
    private readonly parties: QuoteParties,
    private readonly payments: QuotePayments,
  ) {}

  /**
   * The quote as written (its execution, when asked for at once, is the
   * caller's); `challenged` when it waits for strong customer authentication.
   */
  async create(
    ctx: RequestContext,
    input: QuoteRequest,
  ): Promise<{ row: QuoteRow; challenged: boolean }> {
    requirePermission(
      ctx,
      "CREATE_QUOTES",
      ...(input.immediatelyExecute === true ? (["EXECUTE_QUOTES"] as const) : []),
    );
    const source = await this.parties.source(ctx, input.source).catch(inBody("source"));
    const destination = await this.parties
      .destination(ctx, input.destination)
      .catch(inBody("destination"));
    if (input.lookupId !== undefined) {
      await requireLookupOf(this.services.data, ctx, input.lookupId, input.destination);
    }
    if (
      source.sourceAccountId !== null &&
      source.sourceAccountId === destination.receiverAccountId
    ) {
      throw new ApiError(400, "SELF_PAYMENT", "The source account and the receiver are the same");
    }
    if (
      input.immediatelyExecute === true &&
      (source.sourceAccountId === null || source.accountType === "EMBEDDED_WALLET")
    ) {
      throw invalidInput(
        "immediatelyExecute needs an internal account source that is not an EMBEDDED_WALLET (whose execution the wallet signs: create the quote, stamp its payloadToSign, then execute it)",
        { field: "immediatelyExecute" },
      );
    }

    const rate = rateFor(source.sendingCurrency, destination.receivingCurrency);
    if (!rate) {
      throw new ApiError(
        400,
        "INVALID_CURRENCY",
        `The sandbox has no rate from ${source.sendingCurrency} to ${destination.receivingCurrency}; supported currencies: ${SUPPORTED_CURRENCIES.join(", ")}`,
      );
    }
    const amounts = quoteAmounts(
      rate,
      input.lockedCurrencySide,
      BigInt(input.lockedCurrencyAmount),
    );
    if (!amounts) {
      throw new ApiError(
        400,
        "AMOUNT_OUT_OF_RANGE",
        `The amount does not cover the fee of ${rate.feeAmount} ${source.sendingCurrency}`,
      );
    }
    // A conversion can take the other side past what the API carries.
    for (const [field, value] of Object.entries(amounts)) {
      if (!inAmountRange(value)) {
        throw amountOutOfRange(`The quote's ${field} would be ${value}, out of range`, { field });
      }
    }
    // An agent quotes from its customer's internal accounts only (QuoteParties.source).
    if (source.sourceAccountId !== null) {
      checkMovement(ctx, {
        accountId: source.sourceAccountId,
        amount: amounts.sendingAmount,
        currency: source.sendingCurrency,
      });
    }

    const customerId = source.customerId ?? destination.customerId;
    const realtime = input.source.sourceType === "REALTIME_FUNDING";
    // A real-time-funded quote of an SCA customer withholds its instructions until authorized.
    const challenge =
      realtime &&
      (await paymentNeedsSca(
        this.services.data,
        ctx,
        customerId,
        destination.destinationExternalAccountId,
      ))
        ? newChallenge(ctx.clock.now(), input.scaFactor)
        : null;
    const now = ctx.clock.now();
    const realNow = this.services.clock.now();
    const fields: Omit<QuoteRow, "payloadToSign"> = {
      id: newId("Quote"),
      platformId: ctx.platformId,
      customerId,
      agentId: ctx.agent?.agentId ?? null,
      status: challenge ? "PENDING_AUTHORIZATION" : "PENDING",
      source: JSON.stringify(input.source),
      destination: JSON.stringify(input.destination),
      sourceAccountId: source.sourceAccountId,
      destinationExternalAccountId: destination.destinationExternalAccountId,
      receiverAccountId: destination.receiverAccountId,
      sendingCurrency: source.sendingCurrency,
      receivingCurrency: destination.receivingCurrency,
      sendingAmount: amounts.sendingAmount,
      receivingAmount: amounts.receivingAmount,
      exchangeRate: String(rateAsNumber(rate.rateMicros)),
      feeAmount: rate.feeAmount,
      paymentReference: realtime ? paymentReference() : null,
      expiresAt: new Date(now.getTime() + QUOTE_LOCK_SECONDS * 1000),
      transactionId: newId("Transaction"),
      scaChallengeId: challenge?.scaChallengeId ?? null,
      scaFactor: challenge?.scaFactor ?? null,
      scaExpiresAt: challenge?.scaExpiresAt ?? null,
      scaAttempts: 0,
      createdAt: now,
      updatedAt: now,
    };
    const row: QuoteRow = {
      ...fields,
      payloadToSign: source.accountType === "EMBEDDED_WALLET" ? executeQuotePayload(fields) : null,
    };
    const payments = this.payments;
    await this.services.data.transaction(function* () {
      yield* insert("Quote", row);
      yield* payments.open(
        row,
        {
          description: input.description ?? null,
          reference: input.remittanceInformation ?? null,
        },
        now,
      );
      yield* scheduleJob({
        platformId: ctx.platformId,
        kind: QUOTE_EXPIRY_JOB,
        payload: { quoteId: row.id },
        delaySeconds: QUOTE_LOCK_SECONDS,
        now: realNow,
      });
    });
    return { row, challenged: challenge !== null };
  }
}
