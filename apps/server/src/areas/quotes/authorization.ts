import type { Schemas } from "@payments-sandbox/client";
import { ApiError, invalidInput } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import { answerCode } from "../sca/code-challenge.js";
import { requireScaSession } from "../sca/login-state.js";
import { ANSWERED, quoteChallengeStore, quoteNeedsSca } from "./challenge.js";
import type { QuoteExecution } from "./execution.js";
import type { QuotePayments } from "./payment.js";
import { moveQuote, type QuoteRow } from "./records.js";

/** Answers to a quote's pending SCA challenge (POST /quotes/{quoteId}/authorize and resend). */
export class QuoteAuthorization {
  constructor(
    private readonly services: Services,
    private readonly payments: QuotePayments,
    private readonly execution: QuoteExecution,
  ) {}

  /**
   * POST /quotes/{quoteId}/authorize: the code answers the quote's pending
   * challenge. A real-time-funded quote becomes PENDING (its instructions
   * appear); one from an internal account is executed.
   */
  async authorize(
    ctx: RequestContext,
    row: QuoteRow,
    input: Schemas["ScaAuthorization"],
  ): Promise<QuoteRow> {
    const quote = await this.pendingChallenge(ctx, row);
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
      return this.execution.settle(() =>
        this.services.data.transaction(function* () {
          yield* payments.release(quote, at);
          return yield* moveQuote(quote, "PENDING", at, { sca: ANSWERED });
        }),
      );
    }
    // The challenge was the execution's: answered, the execution goes on.
    const executing = await this.execution.settle(() =>
      this.services.data.transaction(function* () {
        return yield* moveQuote(quote, "PENDING", at, { sca: ANSWERED });
      }),
    );
    // The platform answered the challenge itself: that is its approval.
    return this.execution.pay(ctx, executing, false);
  }

  /** POST /quotes/{quoteId}/authorize/resend: the sandbox sends no SMS; the challenge stays. */
  async resend(ctx: RequestContext, row: QuoteRow): Promise<void> {
    const quote = await this.pendingChallenge(ctx, row);
    if (quote.scaFactor !== "SMS_OTP") {
      throw new ApiError(
        409,
        "INVALID_STATE_TRANSITION",
        `The challenge of ${quote.id} is answered with ${quote.scaFactor}, which has no code to send`,
      );
    }
  }

  private async pendingChallenge(ctx: RequestContext, quote: QuoteRow): Promise<QuoteRow> {
    if (quote.status !== "PENDING_AUTHORIZATION" || quote.scaChallengeId === null) {
      // Not required is CONFLICT, as on the SCA operations (seed rule 10).
      throw (await quoteNeedsSca(this.services.data, ctx, quote))
        ? new ApiError(
            409,
            "INVALID_STATE_TRANSITION",
            `Quote ${quote.id} has no pending SCA challenge (it is ${quote.status})`,
          )
        : new ApiError(
            409,
            "CONFLICT",
            `Quote ${quote.id} needs no strong customer authentication: its customer's region does not require it`,
          );
    }
    return quote;
  }
}
