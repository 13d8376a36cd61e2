import type { Schemas } from "@sandbox/client";
import {
  evaluateUmaReceiver,
  parseUmaAddress,
  SANDBOX_UMA_HOST,
  type PaymentStep,
} from "@sandbox/sandbox-rules";
import type { SqlProgram } from "../../db/sql.js";
import { ApiError, notFound } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { DueJob, JobHandlers, JobTools } from "../../jobs/registry.js";
import { credit } from "../ledger/ledger.js";
import {
  createTransaction,
  toTransaction,
  type NewTransaction,
  type Transaction,
  type TransactionRow,
} from "../transactions/records.js";
import {
  applyLaterStep,
  scheduleLaterSteps,
  type StepPayload,
} from "../transactions/later-step.js";
import { planSteps, type StepPlan } from "../transactions/step-plan.js";
import type { UmaDirectory } from "../uma/directory.js";

export type SandboxUmaReceiveRequest = Schemas["SandboxUmaReceiveRequest"];

/** A delayed step of an incoming UMA payment. */
export const UMA_RECEIVE_STEP_JOB = "uma-receive.step";

// A sender on another host is not a magic value: its payment simply arrives.
const ARRIVES_AT_ONCE: readonly PaymentStep[] = [{ afterSeconds: 0, status: "COMPLETED" }];

/**
 * POST /sandbox/uma/receive: an external UMA sender pays one of the
 * platform's customers. The receiver is a customer's UMA address (see
 * UmaDirectory); the sender decides the outcome: a simulated party on the
 * sandbox UMA host (`$success.usd`, `$pending.long.usd`, ...) behaves as the
 * sandbox rules say, any other sender's payment arrives at once. The
 * receiver's account is credited when the payment completes.
 */
export class UmaReceiveService {
  constructor(
    private readonly services: Services,
    private readonly directory: UmaDirectory,
  ) {}

  registerJobs(handlers: JobHandlers): void {
    handlers.register(UMA_RECEIVE_STEP_JOB, (job, tools) => this.stepLater(job, tools));
  }

  async receive(ctx: RequestContext, input: SandboxUmaReceiveRequest): Promise<Transaction> {
    const receiver = parseUmaAddress(input.receiverUmaAddress);
    if (!receiver.ok) {
      throw new ApiError(
        400,
        "INVALID_UMA_ADDRESS",
        `Invalid receiverUmaAddress: ${receiver.problem}.`,
        {
          details: { field: "receiverUmaAddress" },
        },
      );
    }
    const sender = evaluateUmaReceiver(input.senderUmaAddress);
    const { outcome } = sender;
    if (outcome.kind === "REJECT") {
      throw new ApiError(
        outcome.status,
        outcome.errorCode,
        `senderUmaAddress: ${outcome.message}`,
        {
          details: { field: "senderUmaAddress" },
        },
      );
    }
    if (receiver.address.domain === SANDBOX_UMA_HOST) {
      throw notFound(
        "UMA_NOT_FOUND",
        `${receiver.address.address} is a simulated party on ${SANDBOX_UMA_HOST}, not one of your customers`,
      );
    }
    if (sender.address?.address === receiver.address.address) {
      throw new ApiError(400, "SELF_PAYMENT", "The sender and the receiver are the same address");
    }
    let steps = ARRIVES_AT_ONCE;
    if (outcome.kind === "RECEIVER") {
      if (outcome.currency !== input.receivingCurrencyCode) {
        throw new ApiError(
          400,
          "INVALID_CURRENCY",
          `${input.senderUmaAddress} pays in ${outcome.currency} only`,
        );
      }
      steps = outcome.steps;
    }
    const { account } = await this.directory.resolve(
      ctx,
      receiver.address,
      input.receivingCurrencyCode,
    );

    const at = ctx.clock.now();
    const realNow = this.services.clock.now();
    const plan = planSteps(steps, "PENDING");
    const row = await this.services.data.transaction(() =>
      this.record(
        {
          platformId: ctx.platformId,
          type: "UMA_RECEIVE",
          status: plan.state.status,
          stepsApplied: plan.state.stepsApplied,
          ...(plan.state.failureReason ? { failureReason: plan.state.failureReason } : {}),
          direction: "CREDIT",
          amount: BigInt(input.receivingCurrencyAmount),
          currency: input.receivingCurrencyCode,
          internalAccountId: account.id,
          customerId: account.customerId,
        },
        plan,
        at,
        realNow,
      ),
    );
    return toTransaction(row);
  }

  private *record(
    input: NewTransaction,
    plan: StepPlan,
    at: Date,
    realNow: Date,
  ): SqlProgram<TransactionRow> {
    const created = yield* createTransaction(input, at);
    for (const { step } of plan.now) yield* this.moneyEffects(created, step, at);
    yield* scheduleLaterSteps(plan.later, created, UMA_RECEIVE_STEP_JOB, realNow);
    return created;
  }

  /** The receiver is credited when the payment completes; a failed one never moved money. */
  private *moneyEffects(row: TransactionRow, step: PaymentStep, at: Date): SqlProgram<void> {
    if (step.status !== "COMPLETED") return;
    yield* credit({
      platformId: row.platformId,
      accountId: row.internalAccountId ?? "",
      amount: row.amount,
      kind: "UMA_RECEIVE",
      reference: row.id,
      at,
    });
  }

  private async stepLater(job: DueJob, tools: JobTools): Promise<void> {
    await applyLaterStep(tools, job.payload as StepPayload, (row, step, at) =>
      this.moneyEffects(row, step, at),
    );
  }
}
