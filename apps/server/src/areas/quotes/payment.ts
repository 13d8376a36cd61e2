import {
  evaluateUmaReceiver,
  quoteDestinationOutcome,
  type PaymentStep,
} from "@payments-sandbox/sandbox-rules";
import { found, one, q } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import type { DueJob, JobHandlers, JobTools } from "../../jobs/registry.js";
import { debitOrRefuse } from "../ledger/balance-guard.js";
import { credit } from "../ledger/ledger.js";
import {
  createTransaction,
  moveTransaction,
  type TransactionChange,
  type TransactionRow,
} from "../transactions/records.js";
import type { ChangeTimes } from "../transactions/service.js";
import { moveQuote, type QuoteRow, type ScaChange } from "./records.js";
import {
  applyLaterStep,
  scheduleLaterSteps,
  type StepPayload,
} from "../transactions/later-step.js";
import { planSteps, type StepPlan } from "../transactions/step-plan.js";

/** A challenge that no longer holds the quote. */
const SPENT: ScaChange = { scaChallengeId: null, scaFactor: null, scaExpiresAt: null };

/** A delayed step of a quote payment (sandbox suffixes 003 and 005). */
export const QUOTE_PAYMENT_STEP_JOB = "quote.payment-step";
/** A quote not executed or funded before `expiresAt`. */
export const QUOTE_EXPIRY_JOB = "quote.expire";

type QuotePlan = StepPlan & { state: { status: "PROCESSING" | "COMPLETED" | "FAILED" } };

// A platform customer's UMA address is an ordinary receiver, not a magic
// value: the payment completes on execution.
const DELIVER_AT_ONCE: readonly PaymentStep[] = [{ afterSeconds: 0, status: "COMPLETED" }];

/**
 * The payment of an executed (or funded) quote: takes the money from the
 * source, then applies the sandbox outcome of its destination step by step.
 * Steps due at once are applied by the executing request; later ones are
 * jobs. Money that comes back is credited back to the source account.
 */
export class QuotePayments {
  registerJobs(handlers: JobHandlers): void {
    handlers.register(QUOTE_PAYMENT_STEP_JOB, (job, tools) => this.stepLater(job, tools));
    handlers.register(QUOTE_EXPIRY_JOB, (job, tools) => this.expireLater(job, tools));
  }

  /** What happens to the payment after execution, decided by the sandbox rules. */
  private *plan(quote: QuoteRow): SqlProgram<QuotePlan> {
    if (quote.receiverAccountId !== null) return planSteps(DELIVER_AT_ONCE, "PROCESSING");
    if (quote.destinationExternalAccountId !== null) {
      const external = yield* found(
        q
          .selectFrom("ExternalAccount")
          .select("identifier")
          .where("id", "=", quote.destinationExternalAccountId)
          .where("platformId", "=", quote.platformId),
        `external account ${quote.destinationExternalAccountId}`,
      );
      return planSteps(quoteDestinationOutcome(external.identifier).outcome.steps, "PROCESSING");
    }
    const { umaAddress } = JSON.parse(quote.destination) as { umaAddress: string };
    const { outcome } = evaluateUmaReceiver(umaAddress);
    // Checked when the quote was made: no quote exists for a rejected receiver.
    if (outcome.kind !== "RECEIVER") throw new Error(`quote ${quote.id} has no sandbox receiver`);
    return planSteps(outcome.steps, "PROCESSING");
  }

  /**
   * The quote's outgoing transaction, made with the quote (PENDING, or
   * PENDING_AUTHORIZATION while a challenge holds it): it carries the
   * payment through execution.
   */
  *open(
    quote: QuoteRow,
    extra: { description: string | null; reference: string | null },
    at: Date,
  ): SqlProgram<TransactionRow> {
    const { umaAddress } = JSON.parse(quote.destination) as { umaAddress?: string };
    return yield* createTransaction(
      {
        id: quote.transactionId ?? undefined,
        platformId: quote.platformId,
        type: "QUOTE_PAYMENT",
        status: quote.status === "PENDING_AUTHORIZATION" ? "PENDING_AUTHORIZATION" : "PENDING",
        amount: quote.sendingAmount,
        currency: quote.sendingCurrency,
        receivedAmount: quote.receivingAmount,
        receivedCurrency: quote.receivingCurrency,
        exchangeRate: quote.exchangeRate,
        internalAccountId: quote.sourceAccountId,
        externalAccountId: quote.destinationExternalAccountId,
        umaAddress: umaAddress ?? null,
        quoteId: quote.id,
        customerId: quote.customerId,
        agentId: quote.agentId,
        description: extra.description,
        reference: extra.reference,
      },
      at,
    );
  }

  /**
   * Executes a PENDING quote: its transaction moves to the status the
   * immediate steps lead to, the quote moves (conditionally on its status
   * and unexpired, so of two executions one wins), the source is debited
   * (a refusal, 400 INVALID_INPUT, rolls it all back) and later steps are
   * scheduled. `awaitingApproval` stops after recording the request.
   */
  *execute(
    quote: QuoteRow,
    opening: { awaitingApproval: boolean },
    times: ChangeTimes,
  ): SqlProgram<QuoteRow> {
    const transaction = yield* this.transactionOf(quote);
    if (opening.awaitingApproval) {
      yield* moveTransaction(transaction, { status: "PENDING_AUTHORIZATION" }, times.at);
      return yield* moveQuote(quote, "PROCESSING", times.at, { notExpiredAt: times.at });
    }
    const plan = yield* this.plan(quote);
    const moved = yield* moveTransaction(transaction, this.changeOf(quote, plan), times.at);
    const movedQuote = yield* moveQuote(quote, plan.state.status, times.at, {
      notExpiredAt: times.at,
      sca: SPENT,
    });
    yield* this.begin(movedQuote, moved, plan, times);
    return movedQuote;
  }

  /** A challenge holds the payment: the transaction waits in PENDING_AUTHORIZATION. */
  *holdForAuthorization(quote: QuoteRow, at: Date): SqlProgram<void> {
    yield* moveTransaction(
      yield* this.transactionOf(quote),
      { status: "PENDING_AUTHORIZATION" },
      at,
    );
  }

  /** A real-time-funded quote's challenge answered: its transaction waits for the funds. */
  *release(quote: QuoteRow, at: Date): SqlProgram<void> {
    yield* moveTransaction(yield* this.transactionOf(quote), { status: "PENDING" }, at);
  }

  /** A quote past its expiry: it and its transaction are EXPIRED. */
  *expire(quote: QuoteRow, at: Date): SqlProgram<QuoteRow> {
    const transaction = yield* this.transactionOf(quote);
    yield* moveTransaction(transaction, { status: "EXPIRED" }, at);
    return yield* moveQuote(quote, "EXPIRED", at);
  }

  /** Where the payment stands once the plan's immediate steps are applied. */
  private changeOf(quote: QuoteRow, plan: QuotePlan): TransactionChange {
    return {
      status: plan.state.status,
      stepsApplied: plan.state.stepsApplied,
      completed: plan.state.completed,
      ...(plan.state.failureReason ? { failureReason: plan.state.failureReason } : {}),
      // Only money taken from an internal account goes back to it.
      ...(plan.state.refund && quote.sourceAccountId !== null ? { refund: plan.state.refund } : {}),
    };
  }

  private transactionOf(quote: QuoteRow): SqlProgram<TransactionRow> {
    return found(
      q
        .selectFrom("Transaction")
        .selectAll()
        .where("id", "=", quote.transactionId ?? "")
        .where("platformId", "=", quote.platformId),
      `transaction of quote ${quote.id}`,
    );
  }

  /** An agent's PENDING_AUTHORIZATION payment, approved: it proceeds like a direct execution. */
  *approve(transaction: TransactionRow, times: ChangeTimes): SqlProgram<TransactionRow> {
    const quote = yield* this.quoteOf(transaction);
    const plan = yield* this.plan(quote);
    const moved = yield* moveTransaction(transaction, this.changeOf(quote, plan), times.at);
    const movedQuote =
      plan.state.status === quote.status
        ? quote
        : yield* moveQuote(quote, plan.state.status, times.at);
    yield* this.begin(movedQuote, moved, plan, times);
    return moved;
  }

  /** An agent's payment refused by the platform before anything moved: it and its quote fail. */
  *refuse(transaction: TransactionRow, times: ChangeTimes): SqlProgram<TransactionRow> {
    const quote = yield* this.quoteOf(transaction);
    const moved = yield* moveTransaction(transaction, { status: "FAILED" }, times.at);
    yield* moveQuote(quote, "FAILED", times.at);
    return moved;
  }

  private quoteOf(transaction: TransactionRow): SqlProgram<QuoteRow> {
    return found(
      q
        .selectFrom("Quote")
        .selectAll()
        .where("id", "=", transaction.quoteId ?? "")
        .where("platformId", "=", transaction.platformId),
      `quote of transaction ${transaction.id}`,
    );
  }

  /** Debits the source, applies the money effects of the immediate steps, schedules the rest. */
  private *begin(
    quote: QuoteRow,
    transaction: TransactionRow,
    plan: StepPlan,
    times: ChangeTimes,
  ): SqlProgram<void> {
    if (quote.sourceAccountId !== null) {
      yield* debitOrRefuse({
        platformId: quote.platformId,
        accountId: quote.sourceAccountId,
        amount: quote.sendingAmount,
        kind: "QUOTE_PAYMENT",
        reference: transaction.id,
        at: times.at,
      });
    }
    for (const { step } of plan.now)
      yield* this.moneyEffects(quote, transaction.id, step, times.at);
    yield* scheduleLaterSteps(plan.later, transaction, QUOTE_PAYMENT_STEP_JOB, times.realNow);
  }

  private *moneyEffects(
    quote: QuoteRow,
    transactionId: string,
    step: PaymentStep,
    at: Date,
  ): SqlProgram<void> {
    if (step.status === "COMPLETED") {
      if (quote.receiverAccountId !== null) yield* this.deliverToReceiver(quote, at);
      return;
    }
    // The money comes back to the source, unless the refund failed too.
    if (step.refund.status === "COMPLETED" && quote.sourceAccountId !== null) {
      yield* credit({
        platformId: quote.platformId,
        accountId: quote.sourceAccountId,
        amount: quote.sendingAmount,
        kind: "QUOTE_REFUND",
        reference: transactionId,
        at,
      });
    }
  }

  /** A payment to one of the platform's internal accounts (at a customer's UMA address, or named) credits it. */
  private *deliverToReceiver(quote: QuoteRow, at: Date): SqlProgram<void> {
    const account = yield* found(
      q
        .selectFrom("InternalAccount")
        .select(["id", "customerId"])
        .where("id", "=", quote.receiverAccountId ?? "")
        .where("platformId", "=", quote.platformId),
      `receiving account of quote ${quote.id}`,
    );
    const { umaAddress } = JSON.parse(quote.destination) as { umaAddress?: string };
    const received = yield* createTransaction(
      {
        platformId: quote.platformId,
        // A UMA payment to the platform's own customer, or a conversion into
        // one of the platform's internal accounts.
        type: umaAddress ? "UMA_RECEIVE" : "QUOTE_RECEIVE",
        status: "COMPLETED",
        amount: quote.receivingAmount,
        currency: quote.receivingCurrency,
        internalAccountId: account.id,
        customerId: account.customerId,
        quoteId: quote.id,
      },
      at,
    );
    yield* credit({
      platformId: quote.platformId,
      accountId: account.id,
      amount: quote.receivingAmount,
      kind: "UMA_RECEIVE",
      reference: received.id,
      at,
    });
  }

  private async stepLater(job: DueJob, tools: JobTools): Promise<void> {
    await applyLaterStep(tools, job.payload as StepPayload, (row, step, at) =>
      this.laterStep(row, step, at),
    );
  }

  private *laterStep(row: TransactionRow, step: PaymentStep, at: Date): SqlProgram<void> {
    const quote = yield* this.quoteOf(row);
    yield* moveQuote(quote, step.status, at);
    yield* this.moneyEffects(quote, row.id, step, at);
  }

  private async expireLater(job: DueJob, tools: JobTools): Promise<void> {
    const { quoteId } = job.payload as { quoteId: string };
    const at = tools.clock.now();
    await tools.data.transaction(() => this.expireDue(job.platformId, quoteId, at));
  }

  private *expireDue(platformId: string, quoteId: string, at: Date): SqlProgram<void> {
    const quote = yield* one(
      q
        .selectFrom("Quote")
        .selectAll()
        .where("id", "=", quoteId)
        .where("platformId", "=", platformId),
    );
    // Executed, funded or already expired: nothing to do.
    if (!quote || (quote.status !== "PENDING" && quote.status !== "PENDING_AUTHORIZATION")) return;
    yield* this.expire(quote, at);
  }
}
