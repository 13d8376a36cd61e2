import type { Schemas } from "@payments-sandbox/client";
import { ApiError, invalidInput } from "../../errors.js";
import type { SqlProgram } from "../../db/sql.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { AgentDecision } from "../agents/policy.js";
import { submitAgentAction } from "../agents/actions.js";
import { StaleTransactionError } from "../transactions/records.js";
import type { ChangeTimes } from "../transactions/service.js";
import { newChallenge } from "./challenge.js";
import type { QuotePayments } from "./payment.js";
import { moveQuote, StaleQuoteError, type QuoteRow } from "./records.js";

// The steps that move a quote towards its payment, each in one database
// transaction with its payment transaction (payment.ts) and, for an agent,
// the agent's action and usage. Two requests racing on one quote: the
// loser's change finds the quote moved and answers 409.

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

/** Moves quotes on: expiry on a late payment, a hold behind a challenge, the payment itself. */
export class QuoteExecution {
  constructor(
    private readonly services: Services,
    private readonly payments: QuotePayments,
  ) {}

  /** Checks that a quote can still be paid; an expired one becomes EXPIRED, with its transaction. */
  async assertPayable(ctx: RequestContext, quote: QuoteRow): Promise<void> {
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
   * Holds a quote (and its transaction) in PENDING_AUTHORIZATION behind a new
   * challenge. An agent's execution counts against its limits here: the
   * platform's answer to the challenge then starts the payment.
   */
  async challenge(
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
   * Moves the quote on with its payment transaction, and starts the payment;
   * an agent's execution counts against its daily and monthly limits.
   */
  pay(
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
  async settle(change: () => Promise<QuoteRow>): Promise<QuoteRow> {
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
