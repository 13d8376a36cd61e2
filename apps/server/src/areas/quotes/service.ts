import { requireLookupOf } from "../receiver/lookups.js";
import { randomInt } from "node:crypto";
import type { Schemas } from "@payments-sandbox/client";
import { issueCode } from "@payments-sandbox/sandbox-rules";
import { ApiError, fieldError, invalidInput, isNotFound, notFound } from "../../errors.js";
import { insert, one, q, run } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { type RequestContext, type Services, scopedTo } from "../../http/context.js";
import { newId } from "../../ids.js";
import { scheduleJob } from "../../jobs/schedule.js";
import { checkMovement, requirePermission, type AgentDecision } from "../agents/policy.js";
import { submitAgentAction } from "../agents/actions.js";
import type { ExternalAccountService } from "../external-accounts/service.js";
import type { InternalAccountService } from "../internal-accounts/service.js";
import { amountOutOfRange, inAmountRange } from "../ledger/amount-range.js";
import { currenciesOf } from "../customers/service.js";
import { answerCode, type CodeStore } from "../sca/code-challenge.js";
import { requireScaSession } from "../sca/login-state.js";
import { paymentNeedsSca } from "../sca/requirement.js";
import { StaleTransactionError, type Transaction } from "../transactions/records.js";
import type { ChangeTimes, TransactionService } from "../transactions/service.js";
import type { UmaDirectory } from "../uma/directory.js";
import { quoteAmounts, rateAsNumber, rateFor, SUPPORTED_CURRENCIES } from "./exchange-rates.js";
import { QUOTE_EXPIRY_JOB, type QuotePayments } from "./payment.js";
import {
  moveQuote,
  StaleQuoteError,
  toQuote,
  type Quote,
  type QuoteRow,
  type ScaChange,
} from "./records.js";
import { executeQuotePayload } from "./wallet-payload.js";
import type { SignedRequests } from "../../signing/signed-requests.js";

export type QuoteRequest = Schemas["QuoteRequest"];
export type SandboxSendRequest = Schemas["SandboxSendRequest"];

/** How long a quote's price holds. */
export const QUOTE_LOCK_SECONDS = 300;

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

interface ResolvedSource {
  sendingCurrency: string;
  sourceAccountId: string | null;
  /** The internal account's type (an EMBEDDED_WALLET source signs the execution). */
  accountType: string | null;
  customerId: string | null;
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
    /** Checks the wallet's stamp on the execution of a quote from an EMBEDDED_WALLET. */
    private readonly signing: SignedRequests,
  ) {
    transactions.onDecisions("QUOTE_PAYMENT", {
      approve: {
        from: ["PENDING_AUTHORIZATION"],
        run: (row, times) => payments.approve(row, times),
      },
      reject: { from: ["PENDING_AUTHORIZATION"], run: (row, times) => payments.refuse(row, times) },
    });
  }

  /** A new quote and its transaction; `challenged` when it waits for strong customer authentication. */
  async create(
    ctx: RequestContext,
    input: QuoteRequest,
  ): Promise<{ quote: Quote; challenged: boolean }> {
    requirePermission(
      ctx,
      "CREATE_QUOTES",
      ...(input.immediatelyExecute === true ? (["EXECUTE_QUOTES"] as const) : []),
    );
    const source = await this.resolveSource(ctx, input.source).catch(inBody("source"));
    const destination = await this.resolveDestination(ctx, input.destination).catch(
      inBody("destination"),
    );
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
    // An agent quotes from its customer's internal accounts only (resolveSource).
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
    if (input.immediatelyExecute === true) {
      // Wallet sources, whose execution the wallet signs, are refused above.
      return { quote: await this.execute(ctx, row.id, undefined, {}), challenged: false };
    }
    return { quote: toQuote(row), challenged: challenge !== null };
  }

  private async resolveSource(
    ctx: RequestContext,
    source: QuoteRequest["source"],
  ): Promise<ResolvedSource> {
    if (source.sourceType === "ACCOUNT") {
      if (source.accountId.startsWith("ExternalAccount:")) {
        throw invalidInput(
          "The sandbox quotes from internal accounts only; pull from an external account with POST /transfer-in first",
          { field: "source.accountId" },
        );
      }
      const account = await this.accounts.getRow(ctx, source.accountId);
      if (source.customerId !== undefined && source.customerId !== account.customerId) {
        throw invalidInput(`Account ${account.id} does not belong to ${source.customerId}`, {
          field: "source.customerId",
        });
      }
      return {
        sendingCurrency: account.currency,
        sourceAccountId: account.id,
        accountType: account.type,
        customerId: account.customerId,
      };
    }
    if (ctx.agent) {
      throw invalidInput("An agent pays from its customer's internal accounts only", {
        field: "source.sourceType",
      });
    }
    if (source.customerId !== undefined) await this.customerRegion(ctx, source.customerId);
    return {
      sendingCurrency: source.currency,
      sourceAccountId: null,
      accountType: null,
      customerId: source.customerId ?? null,
    };
  }

  private async resolveDestination(
    ctx: RequestContext,
    destination: QuoteRequest["destination"],
  ): Promise<ResolvedDestination> {
    if (destination.destinationType === "ACCOUNT") {
      if (destination.accountId.startsWith("InternalAccount:")) {
        // A conversion into one of the platform's internal accounts.
        const account = await this.accounts.getRow(ctx, destination.accountId);
        return {
          receivingCurrency: account.currency,
          customerId: account.customerId,
          destinationExternalAccountId: null,
          receiverAccountId: account.id,
        };
      }
      const external = await this.externalAccounts.getRow(ctx, destination.accountId);
      return {
        receivingCurrency: external.currency,
        customerId: external.customerId,
        destinationExternalAccountId: external.id,
        receiverAccountId: null,
      };
    }
    const receiver = await this.uma.receiver(ctx, destination.umaAddress);
    if (receiver.kind === "SIMULATED") {
      const currency = destination.currency ?? receiver.currency;
      if (receiver.currency !== currency) {
        throw new ApiError(
          400,
          "INVALID_CURRENCY",
          `${destination.umaAddress} receives ${receiver.currency} only`,
        );
      }
      return {
        receivingCurrency: currency,
        customerId: null,
        destinationExternalAccountId: null,
        receiverAccountId: null,
      };
    }
    // Not the sandbox UMA host: one of the platform's own customers.
    const { customer, address } = receiver;
    const currency = destination.currency ?? currenciesOf(customer)[0];
    if (currency === undefined) {
      throw new ApiError(400, "INVALID_CURRENCY", `${address.address} receives no currency`);
    }
    const account = await this.uma.accountOf(ctx, customer, address, currency);
    return {
      receivingCurrency: currency,
      customerId: customer.id,
      destinationExternalAccountId: null,
      receiverAccountId: account.id,
    };
  }

  /** The region of one of the platform's customers (404 for another platform's). */
  private async customerRegion(ctx: RequestContext, customerId: string): Promise<string | null> {
    const customer = await this.services.data.one(
      q
        .selectFrom("Customer")
        .select("region")
        .where("id", "=", customerId)
        .where("platformId", "=", ctx.platformId),
    );
    if (!customer) throw notFound("USER_NOT_FOUND", `Customer ${customerId} not found`);
    return customer.region;
  }

  /**
   * Whether paying the quote needs a challenge: its customer uses SCA and
   * its destination is not one of the customer's trusted beneficiaries.
   */
  private needsSca(ctx: RequestContext, quote: QuoteRow): Promise<boolean> {
    return paymentNeedsSca(
      this.services.data,
      ctx,
      quote.customerId,
      quote.destinationExternalAccountId,
    );
  }

  private async getRow(ctx: RequestContext, id: string): Promise<QuoteRow> {
    const row = await this.services.data.one(
      q.selectFrom("Quote").selectAll().where("id", "=", id).$call(scopedTo(ctx)),
    );
    // An agent sees the quotes it made, not others of its customer.
    if (!row || (ctx.agent && row.agentId !== ctx.agent.agentId)) {
      throw notFound("QUOTE_NOT_FOUND", `Quote ${id} not found`);
    }
    return row;
  }

  async get(ctx: RequestContext, id: string): Promise<Quote> {
    requirePermission(ctx, "CREATE_QUOTES");
    return toQuote(await this.getRow(ctx, id));
  }

  /** Checks that a quote can still be paid; an expired one becomes EXPIRED, with its transaction. */
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
        .transaction(() => this.payments.expire(quote, now))
        .catch((err: unknown) => {
          if (!(err instanceof StaleQuoteError) && !(err instanceof StaleTransactionError)) {
            throw err;
          }
        });
      throw invalidInput(`The quote expired at ${quote.expiresAt.toISOString()}`, {
        expiresAt: quote.expiresAt.toISOString(),
      });
    }
  }

  /**
   * Executes a quote funded from an internal account: debits the sending
   * amount (never more than the balance) and starts the payment. From an
   * EMBEDDED_WALLET account `walletSignature` must be a stamp over the
   * quote's payloadToSign by an active session of that wallet (401
   * otherwise). For an SCA customer the call issues a challenge instead, and
   * authorizing it executes.
   */
  async execute(
    ctx: RequestContext,
    id: string,
    walletSignature: string | undefined,
    input: Schemas["ExecuteQuoteRequest"] | undefined,
  ): Promise<Quote> {
    requirePermission(ctx, "EXECUTE_QUOTES");
    const quote = await this.getRow(ctx, id);
    if (quote.sourceAccountId === null) {
      throw invalidInput(
        "A REALTIME_FUNDING quote is paid by following its paymentInstructions (in the sandbox: POST /sandbox/send), not executed",
      );
    }
    await this.assertPayable(ctx, quote);
    const source = await this.accounts.getRow(ctx, quote.sourceAccountId);
    if (source.type === "EMBEDDED_WALLET") {
      if (quote.payloadToSign === null) {
        // Only a quote made before wallet quotes carried their payload.
        throw new ApiError(
          409,
          "INVALID_STATE_TRANSITION",
          `Quote ${id} carries no payloadToSign for its EMBEDDED_WALLET source; create a new quote`,
        );
      }
      await this.signing.verifySessionStamp(ctx, walletSignature, quote.payloadToSign, source.id);
    }
    const agent = checkMovement(ctx, {
      accountId: source.id,
      amount: quote.sendingAmount,
      currency: quote.sendingCurrency,
    });
    if (await this.needsSca(ctx, quote)) {
      return toQuote(await this.challenge(ctx, quote, input?.scaFactor, agent));
    }
    return toQuote(await this.pay(ctx, quote, agent?.awaitingApproval ?? false, agent));
  }

  /**
   * Holds a quote (and its transaction) in PENDING_AUTHORIZATION behind a new
   * challenge. An agent's execution counts against its limits here: the
   * platform's answer to the challenge then starts the payment.
   */
  private async challenge(
    ctx: RequestContext,
    quote: QuoteRow,
    factor: Schemas["ScaFactor"] | undefined,
    agent: AgentDecision | undefined,
  ): Promise<QuoteRow> {
    const at = ctx.clock.now();
    const sca = newChallenge(at, factor);
    const payments = this.payments;
    return this.settle(() =>
      this.services.data.transaction(function* () {
        yield* payments.holdForAuthorization(quote, at);
        // The platform's answer to the challenge is its approval.
        yield* chargeIfAgent(agent, quote, at, false);
        return yield* moveQuote(quote, "PENDING_AUTHORIZATION", at, {
          notExpiredAt: at,
          sca: { ...sca, scaAttempts: 0 },
        });
      }),
    );
  }

  /**
   * POST /quotes/{quoteId}/authorize: the code answers the quote's pending
   * challenge. A real-time-funded quote becomes PENDING (its instructions
   * appear); one from an internal account is executed.
   */
  async authorize(
    ctx: RequestContext,
    id: string,
    input: Schemas["ScaAuthorization"],
  ): Promise<Quote> {
    const quote = await this.pendingChallenge(ctx, id);
    // A challenge is pending only for a customer who uses SCA.
    if (quote.customerId !== null) {
      await requireScaSession(this.services.data, ctx, quote.customerId);
    }
    const at = ctx.clock.now();
    await answerCode(this.services.data, {
      kind: "SCA",
      issued: { expiresAt: quote.scaExpiresAt ?? quote.expiresAt, attempts: quote.scaAttempts },
      code: input.code,
      now: at,
      store: quoteChallengeStore(quote),
      unusable: () =>
        invalidInput("The SCA challenge expired; execute the quote again for a new one", {
          field: "code",
        }),
    });
    if (quote.sourceAccountId === null) {
      const payments = this.payments;
      const released = await this.settle(() =>
        this.services.data.transaction(function* () {
          yield* payments.release(quote, at);
          return yield* moveQuote(quote, "PENDING", at, { sca: ANSWERED });
        }),
      );
      return toQuote(released);
    }
    // The challenge was the execution's: answered, the execution goes on.
    const executing = await this.settle(() =>
      this.services.data.transaction(function* () {
        return yield* moveQuote(quote, "PENDING", at, { sca: ANSWERED });
      }),
    );
    // The platform answered the challenge itself: that is its approval.
    return toQuote(await this.pay(ctx, executing, false));
  }

  /** POST /quotes/{quoteId}/authorize/resend: the sandbox sends no SMS; the challenge stays. */
  async resend(ctx: RequestContext, id: string): Promise<void> {
    const quote = await this.pendingChallenge(ctx, id);
    if (quote.scaFactor !== "SMS_OTP") {
      throw new ApiError(
        409,
        "INVALID_STATE_TRANSITION",
        `The challenge of ${id} is answered with ${quote.scaFactor}, which has no code to send`,
      );
    }
  }

  private async pendingChallenge(ctx: RequestContext, id: string): Promise<QuoteRow> {
    const quote = await this.getRow(ctx, id);
    if (quote.status !== "PENDING_AUTHORIZATION" || quote.scaChallengeId === null) {
      // Not required is CONFLICT, as on the SCA operations (seed rule 10).
      throw (await this.needsSca(ctx, quote))
        ? new ApiError(
            409,
            "INVALID_STATE_TRANSITION",
            `Quote ${id} has no pending SCA challenge (it is ${quote.status})`,
          )
        : new ApiError(
            409,
            "CONFLICT",
            `Quote ${id} needs no strong customer authentication: its customer's region does not require it`,
          );
    }
    return quote;
  }

  /** POST /sandbox/send: the money of a real-time-funded quote arrives; its payment starts. */
  async fundRealtime(ctx: RequestContext, input: SandboxSendRequest): Promise<Transaction> {
    const quote = await this.getRow(ctx, input.quoteId);
    if (quote.paymentReference === null) {
      throw invalidInput(
        "Only REALTIME_FUNDING quotes are funded this way; execute a quote from an internal account with POST /quotes/{quoteId}/execute",
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
    return this.transactions.viewOne(row);
  }

  /**
   * Moves the quote on with its payment transaction, and starts the payment;
   * an agent's execution counts against its daily and monthly limits.
   */
  private pay(
    ctx: RequestContext,
    quote: QuoteRow,
    awaitingApproval: boolean,
    agent?: AgentDecision,
  ): Promise<QuoteRow> {
    const times: ChangeTimes = {
      platformId: ctx.platformId,
      at: ctx.clock.now(),
      realNow: this.services.clock.now(),
    };
    const payments = this.payments;
    return this.settle(() =>
      this.services.data.transaction(function* () {
        const moved = yield* payments.execute(quote, { awaitingApproval }, times);
        yield* chargeIfAgent(agent, quote, times.at, awaitingApproval);
        return moved;
      }),
    );
  }

  /** Runs a change of a quote; losing a race to another request is 409. */
  private async settle(change: () => Promise<QuoteRow>): Promise<QuoteRow> {
    try {
      return await change();
    } catch (err) {
      if (err instanceof StaleQuoteError || err instanceof StaleTransactionError) {
        throw new ApiError(
          409,
          "INVALID_STATE_TRANSITION",
          "This quote was executed, funded, authorized or expired by another request",
        );
      }
      throw err;
    }
  }
}

/**
 * What a request body names and is not there: the live contract answers 400
 * (an unknown UMA receiver is INVALID_RECEIVER), not 404.
 */
function inBody(field: string) {
  return (err: unknown): never => {
    if (!isNotFound(err)) throw err;
    if (err.code === "UMA_NOT_FOUND") {
      throw new ApiError(400, "INVALID_RECEIVER", err.message, { details: { field } });
    }
    throw invalidInput(err.message, { errors: [fieldError(`body.${field}`, "not found")] });
  };
}

/**
 * Counts an agent's execution of the quote and records it as the agent's
 * action, in the execution's own database transaction.
 */
function* chargeIfAgent(
  agent: AgentDecision | undefined,
  quote: QuoteRow,
  at: Date,
  waiting: boolean,
): SqlProgram<void> {
  if (!agent || quote.transactionId === null) return;
  yield* submitAgentAction({
    platformId: quote.platformId,
    transactionId: quote.transactionId,
    decision: agent,
    request: { type: "EXECUTE_QUOTE", quoteId: quote.id },
    waiting,
    at,
  });
}

/** An answered (or spent) challenge no longer holds the quote. */
const ANSWERED: ScaChange = { scaChallengeId: null, scaExpiresAt: null };

/** A new SCA challenge; the sandbox answers SMS codes only (TOTP and PASSKEY need enrolment). */
function newChallenge(
  at: Date,
  factor: Schemas["ScaFactor"] | undefined,
): ScaChange & {
  scaChallengeId: string;
  scaFactor: string;
  scaExpiresAt: Date;
} {
  if (factor !== undefined && factor !== "SMS_OTP") {
    throw invalidInput(
      `scaFactor ${factor} needs an enrolled factor; the sandbox challenges with SMS_OTP`,
      { field: "scaFactor" },
    );
  }
  return {
    scaChallengeId: newId("ScaChallenge"),
    scaFactor: "SMS_OTP",
    scaExpiresAt: issueCode("SCA", at).expiresAt,
  };
}

/**
 * A quote keeps its challenge on its own row: a wrong answer counts against
 * the challenge that was read, and the last one spends it (the quote then
 * has no pending challenge).
 */
function quoteChallengeStore(quote: QuoteRow): CodeStore {
  const challengeId = quote.scaChallengeId;
  return {
    *countWrong(spent) {
      if (challengeId === null) return undefined;
      const counted = yield* one(
        q
          .updateTable("Quote")
          .set((eb) => ({ scaAttempts: eb("scaAttempts", "+", 1) }))
          .where("id", "=", quote.id)
          .where("scaChallengeId", "=", challengeId)
          .returning("scaAttempts"),
      );
      if (counted && spent(counted.scaAttempts)) {
        yield* run(
          q
            .updateTable("Quote")
            .set({ scaChallengeId: null, scaExpiresAt: null })
            .where("id", "=", quote.id)
            .where("scaChallengeId", "=", challengeId),
        );
      }
      return counted?.scaAttempts;
    },
  };
}
