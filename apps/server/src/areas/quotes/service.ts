import type { Schemas } from "@payments-sandbox/client";
import { ApiError, invalidInput, notFound } from "../../errors.js";
import { q } from "../../db/query.js";
import { type RequestContext, type Services, scopedTo } from "../../http/context.js";
import { checkMovement, requirePermission } from "../agents/policy.js";
import type { ExternalAccountService } from "../external-accounts/service.js";
import type { InternalAccountService } from "../internal-accounts/service.js";
import type { Transaction } from "../transactions/records.js";
import type { TransactionService } from "../transactions/service.js";
import type { UmaDirectory } from "../uma/directory.js";
import type { SignedRequests } from "../../signing/signed-requests.js";
import { QuoteAuthorization } from "./authorization.js";
import { quoteNeedsSca } from "./challenge.js";
import { QuoteCreation } from "./creation.js";
import { QuoteExecution } from "./execution.js";
import { QuoteParties, type QuoteRequest } from "./parties.js";
import type { QuotePayments } from "./payment.js";
import { toQuote, type Quote, type QuoteRow } from "./records.js";

export { QUOTE_LOCK_SECONDS } from "./creation.js";
export type { QuoteRequest };
export type SandboxSendRequest = Schemas["SandboxSendRequest"];

/**
 * Cross-currency quotes: a locked price, then execution (or real-time funding) and payment.
 *
 * Each operation reads its quote here and hands it on: resolving a request's
 * parties (parties.ts), writing a new quote (creation.ts), moving a quote
 * towards its payment (execution.ts, payment.ts), and its SCA challenge
 * (challenge.ts, authorization.ts).
 */
export class QuoteService {
  private readonly creation: QuoteCreation;
  private readonly execution: QuoteExecution;
  private readonly authorization: QuoteAuthorization;

  constructor(
    private readonly services: Services,
    private readonly accounts: InternalAccountService,
    externalAccounts: ExternalAccountService,
    uma: UmaDirectory,
    payments: QuotePayments,
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
    const parties = new QuoteParties(services, accounts, externalAccounts, uma);
    this.creation = new QuoteCreation(services, parties, payments);
    this.execution = new QuoteExecution(services, payments);
    this.authorization = new QuoteAuthorization(services, payments, this.execution);
  }

  /** A new quote and its transaction; `challenged` when it waits for strong customer authentication. */
  async create(
    ctx: RequestContext,
    input: QuoteRequest,
  ): Promise<{ quote: Quote; challenged: boolean }> {
    const { row, challenged } = await this.creation.create(ctx, input);
    if (input.immediatelyExecute === true) {
      // Wallet sources, whose execution the wallet signs, are refused by the creation.
      return { quote: await this.execute(ctx, row.id, undefined, {}), challenged: false };
    }
    return { quote: toQuote(row), challenged };
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
    await this.execution.assertPayable(ctx, quote);
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
    if (await quoteNeedsSca(this.services.data, ctx, quote)) {
      return toQuote(await this.execution.challenge(ctx, quote, input?.scaFactor, agent));
    }
    return toQuote(await this.execution.pay(ctx, quote, agent?.awaitingApproval ?? false, agent));
  }

  /** POST /quotes/{quoteId}/authorize (authorization.ts). */
  async authorize(
    ctx: RequestContext,
    id: string,
    input: Schemas["ScaAuthorization"],
  ): Promise<Quote> {
    return toQuote(await this.authorization.authorize(ctx, await this.getRow(ctx, id), input));
  }

  /** POST /quotes/{quoteId}/authorize/resend (authorization.ts). */
  async resend(ctx: RequestContext, id: string): Promise<void> {
    await this.authorization.resend(ctx, await this.getRow(ctx, id));
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
    await this.execution.assertPayable(ctx, quote);
    const paid = await this.execution.pay(ctx, quote, false);
    const row = await this.transactions.getRow(ctx, paid.transactionId ?? "");
    return this.transactions.viewOne(row);
  }
}
