import { randomInt } from "node:crypto";
import type { Schemas } from "@sandbox/client";
import { ApiError, invalidInput, notFound } from "../../errors.js";
import { insert, q } from "../../db/query.js";
import { type RequestContext, type Services, scopedTo } from "../../http/context.js";
import { newId } from "../../ids.js";
import { scheduleJob } from "../../jobs/schedule.js";
import { enforceAgentLimit, needsApproval } from "../agents/policy.js";
import type { ExternalAccountService } from "../external-accounts/service.js";
import type { InternalAccountService } from "../internal-accounts/service.js";
import { amountOutOfRange, inAmountRange } from "../ledger/amount-range.js";
import type { Transaction } from "../transactions/records.js";
import type { ChangeTimes, TransactionService } from "../transactions/service.js";
import type { UmaDirectory } from "../uma/directory.js";
import { quoteAmounts, rateAsNumber, rateFor, SUPPORTED_CURRENCIES } from "./exchange-rates.js";
import { QUOTE_EXPIRY_JOB, type QuotePayments } from "./payment.js";
import { moveQuote, StaleQuoteError, toQuote, type Quote, type QuoteRow } from "./records.js";
import {
  EXECUTE_QUOTE_ACTION,
  type SignedRequestGuard,
  type SignedRequestHeaders,
} from "./signed-request-guard.js";

export type QuoteCreate = Schemas["QuoteCreate"];
export type SandboxSendRequest = Schemas["SandboxSendRequest"];
export type ExecuteResult =
  | { kind: "EXECUTED"; quote: Quote }
  | { kind: "CHALLENGE"; challenge: Schemas["SignedRequestChallenge"] };

/** How long a quote's price holds. */
export const QUOTE_LOCK_SECONDS = 300;

export interface QuoteServiceOptions {
  /**
   * The signed-retry check for quotes funded from an EMBEDDED_WALLET account.
   * Absent: such quotes execute without a wallet signature.
   */
  signedRequestGuard?: SignedRequestGuard;
}

const REFERENCE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
function paymentReference(): string {
  const pick = () => REFERENCE_ALPHABET[randomInt(REFERENCE_ALPHABET.length)];
  const group = () => Array.from({ length: 4 }, pick).join("");
  return `QT-${group()}-${group()}`;
}

interface ResolvedDestination {
  receivingCurrency: string;
  customerId: string | null;
  destinationExternalAccountId: string | null;
  receiverAccountId: string | null;
}

/** Cross-currency quotes: a locked price, then execution (or real-time funding) and payment. */
export class QuoteService {
  constructor(
    private readonly services: Services,
    private readonly accounts: InternalAccountService,
    private readonly externalAccounts: ExternalAccountService,
    private readonly uma: UmaDirectory,
    private readonly payments: QuotePayments,
    private readonly transactions: TransactionService,
    private readonly options: QuoteServiceOptions = {},
  ) {
    transactions.onDecisions("QUOTE_PAYMENT", {
      approve: {
        from: ["PENDING_AUTHORIZATION"],
        run: (row, times) => payments.approve(row, times),
      },
      reject: { from: ["PENDING_AUTHORIZATION"], run: (row, times) => payments.refuse(row, times) },
    });
  }

  async create(ctx: RequestContext, input: QuoteCreate): Promise<Quote> {
    let sendingCurrency: string;
    let sourceAccountId: string | null = null;
    let sourceCustomerId: string | null = null;
    if (input.source.sourceType === "INTERNAL_ACCOUNT") {
      const account = await this.accounts.getRow(ctx, input.source.internalAccountId);
      sendingCurrency = account.currency;
      sourceAccountId = account.id;
      sourceCustomerId = account.customerId;
    } else {
      if (ctx.agent) {
        throw invalidInput("An agent pays from its customer's internal accounts only", {
          field: "source.sourceType",
        });
      }
      sendingCurrency = input.source.currency;
    }
    const destination = await this.resolveDestination(ctx, input.destination);
    if (sourceAccountId !== null && sourceAccountId === destination.receiverAccountId) {
      throw new ApiError(400, "SELF_PAYMENT", "The source account and the receiver are the same");
    }

    const rate = rateFor(sendingCurrency, destination.receivingCurrency);
    if (!rate) {
      throw new ApiError(
        400,
        "INVALID_CURRENCY",
        `The sandbox has no rate from ${sendingCurrency} to ${destination.receivingCurrency}; supported currencies: ${SUPPORTED_CURRENCIES.join(", ")}`,
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
        `The amount does not cover the fee of ${rate.feeAmount} ${sendingCurrency}`,
      );
    }
    // A conversion can take the other side past what the API carries.
    for (const [field, value] of Object.entries(amounts)) {
      if (!inAmountRange(value)) {
        throw amountOutOfRange(`The quote's ${field} would be ${value}, out of range`, { field });
      }
    }
    enforceAgentLimit(ctx, amounts.sendingAmount);

    const now = ctx.clock.now();
    const realNow = this.services.clock.now();
    const row: QuoteRow = {
      id: newId("Quote"),
      platformId: ctx.platformId,
      customerId: sourceCustomerId ?? destination.customerId,
      agentId: ctx.agent?.agentId ?? null,
      status: "PENDING",
      source: JSON.stringify(input.source),
      destination: JSON.stringify(input.destination),
      sourceAccountId,
      destinationExternalAccountId: destination.destinationExternalAccountId,
      receiverAccountId: destination.receiverAccountId,
      sendingCurrency,
      receivingCurrency: destination.receivingCurrency,
      sendingAmount: amounts.sendingAmount,
      receivingAmount: amounts.receivingAmount,
      exchangeRate: String(rateAsNumber(rate.rateMicros)),
      feeAmount: rate.feeAmount,
      paymentReference: input.source.sourceType === "REALTIME_FUNDING" ? paymentReference() : null,
      expiresAt: new Date(now.getTime() + QUOTE_LOCK_SECONDS * 1000),
      transactionId: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.services.data.transaction(function* () {
      yield* insert("Quote", row);
      yield* scheduleJob({
        platformId: ctx.platformId,
        kind: QUOTE_EXPIRY_JOB,
        payload: { quoteId: row.id },
        delaySeconds: QUOTE_LOCK_SECONDS,
        now: realNow,
      });
    });
    return toQuote(row);
  }

  private async resolveDestination(
    ctx: RequestContext,
    destination: QuoteCreate["destination"],
  ): Promise<ResolvedDestination> {
    if (destination.destinationType === "EXTERNAL_ACCOUNT") {
      const external = await this.externalAccounts.getRow(ctx, destination.externalAccountId);
      return {
        receivingCurrency: external.currency,
        customerId: external.customerId,
        destinationExternalAccountId: external.id,
        receiverAccountId: null,
      };
    }
    const receiver = await this.uma.receiver(ctx, destination.umaAddress);
    if (receiver.kind === "SIMULATED") {
      if (receiver.currency !== destination.currency) {
        throw new ApiError(
          400,
          "INVALID_CURRENCY",
          `${destination.umaAddress} receives ${receiver.currency} only`,
        );
      }
      return {
        receivingCurrency: destination.currency,
        customerId: null,
        destinationExternalAccountId: null,
        receiverAccountId: null,
      };
    }
    // Not the sandbox UMA host: one of the platform's own customers.
    const { customer, address } = receiver;
    const account = await this.uma.accountOf(ctx, customer, address, destination.currency);
    return {
      receivingCurrency: destination.currency,
      customerId: customer.id,
      destinationExternalAccountId: null,
      receiverAccountId: account.id,
    };
  }

  private async getRow(ctx: RequestContext, id: string): Promise<QuoteRow> {
    const row = await this.services.data.one(
      q.selectFrom("Quote").selectAll().where("id", "=", id).$call(scopedTo(ctx)),
    );
    if (!row) throw notFound("QUOTE_NOT_FOUND", `Quote ${id} not found`);
    return row;
  }

  async get(ctx: RequestContext, id: string): Promise<Quote> {
    return toQuote(await this.getRow(ctx, id));
  }

  /** Checks that a quote can still be paid; an expired PENDING quote becomes EXPIRED. */
  private async assertPayable(ctx: RequestContext, quote: QuoteRow): Promise<void> {
    if (quote.status !== "PENDING") {
      throw new ApiError(
        409,
        "INVALID_STATE_TRANSITION",
        `Only PENDING quotes can be executed or funded; this one is ${quote.status}`,
      );
    }
    const now = ctx.clock.now();
    if (now >= quote.expiresAt) {
      await this.services.data
        .transaction(() => moveQuote(quote, "EXPIRED", now))
        .catch((err: unknown) => {
          if (!(err instanceof StaleQuoteError)) throw err;
        });
      throw invalidInput(`The quote expired at ${quote.expiresAt.toISOString()}`, {
        expiresAt: quote.expiresAt.toISOString(),
      });
    }
  }

  /**
   * Executes a quote funded from an internal account: debits the sending
   * amount (never more than the balance) and starts the payment. From an
   * EMBEDDED_WALLET account the request must be a signed retry when a
   * SignedRequestGuard is configured.
   */
  async execute(
    ctx: RequestContext,
    id: string,
    walletHeaders: SignedRequestHeaders,
  ): Promise<ExecuteResult> {
    const quote = await this.getRow(ctx, id);
    if (quote.sourceAccountId === null) {
      throw invalidInput(
        "A REALTIME_FUNDING quote is paid by following its paymentInstructions (in the sandbox: POST /sandbox/send), not executed",
      );
    }
    await this.assertPayable(ctx, quote);
    const source = await this.accounts.getRow(ctx, quote.sourceAccountId);
    const guard = this.options.signedRequestGuard;
    if (source.type === "EMBEDDED_WALLET" && guard) {
      const decision = await guard.check({
        ctx,
        accountId: source.id,
        action: EXECUTE_QUOTE_ACTION,
        parameters: { quoteId: quote.id },
        headers: walletHeaders,
      });
      if (decision.kind === "CHALLENGE")
        return { kind: "CHALLENGE", challenge: decision.challenge };
    }
    enforceAgentLimit(ctx, quote.sendingAmount);
    const awaiting = needsApproval(ctx, quote.sendingAmount);
    const updated = await this.pay(ctx, quote, awaiting);
    return { kind: "EXECUTED", quote: toQuote(updated) };
  }

  /** POST /sandbox/send: the sender pays a REALTIME_FUNDING quote's instructions. */
  /** POST /sandbox/send: the money of a real-time-funded quote arrives; its payment starts. */
  async fundRealtime(ctx: RequestContext, input: SandboxSendRequest): Promise<Transaction> {
    const quote = await this.getRow(ctx, input.quoteId);
    if (quote.paymentReference === null) {
      throw invalidInput(
        "Only REALTIME_FUNDING quotes are funded this way; execute INTERNAL_ACCOUNT quotes with POST /quotes/{quoteId}/execute",
        { field: "quoteId" },
      );
    }
    if (input.currencyCode !== quote.sendingCurrency) {
      throw new ApiError(
        400,
        "INVALID_CURRENCY",
        `This quote is paid in ${quote.sendingCurrency}, not ${input.currencyCode}`,
      );
    }
    if (
      input.currencyAmount !== undefined &&
      BigInt(input.currencyAmount) !== quote.sendingAmount
    ) {
      throw new ApiError(
        400,
        "INVALID_AMOUNT",
        `This quote is funded with exactly ${quote.sendingAmount} (minor units of ${quote.sendingCurrency}), not ${input.currencyAmount}`,
      );
    }
    await this.assertPayable(ctx, quote);
    const paid = await this.pay(ctx, quote, false);
    const row = await this.transactions.getRow(ctx, paid.transactionId ?? "");
    const [view] = await this.transactions.view([row]);
    return view!;
  }

  /** Moves the quote on with its payment transaction, and starts the payment. */
  private async pay(
    ctx: RequestContext,
    quote: QuoteRow,
    awaitingApproval: boolean,
  ): Promise<QuoteRow> {
    const times: ChangeTimes = {
      platformId: ctx.platformId,
      at: ctx.clock.now(),
      realNow: this.services.clock.now(),
    };
    try {
      return await this.services.data.transaction(() =>
        this.payments.execute(
          quote,
          { agentId: ctx.agent?.agentId ?? null, awaitingApproval },
          times,
        ),
      );
    } catch (err) {
      if (err instanceof StaleQuoteError) {
        throw new ApiError(
          409,
          "INVALID_STATE_TRANSITION",
          "This quote was executed, funded or expired by another request",
        );
      }
      throw err;
    }
  }
}
