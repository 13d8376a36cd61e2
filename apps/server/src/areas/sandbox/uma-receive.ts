import type { Schemas } from "@payments-sandbox/client";
import {
  evaluateUmaReceiver,
  parseUmaAddress,
  SANDBOX_UMA_HOST,
  type PaymentStep,
} from "@payments-sandbox/sandbox-rules";
import type { SqlProgram } from "../../db/sql.js";
import { ApiError, fieldError, invalidInput, notFound } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { DueJob, JobHandlers, JobTools } from "../../jobs/registry.js";
import { credit } from "../ledger/ledger.js";
import type { CustomerService } from "../customers/service.js";
import {
  createTransaction,
  moveTransaction,
  type IncomingTransaction,
  type NewTransaction,
  type TransactionRow,
} from "../transactions/records.js";
import type { TransactionAction, TransactionService } from "../transactions/service.js";
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

/** stepsApplied of a payment the platform decided: past any step a job could still apply. */
const DECIDED = 1_000_000;

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
    private readonly customers: CustomerService,
    private readonly transactions: TransactionService,
  ) {
    transactions.onDecisions("UMA_RECEIVE", {
      approve: this.decision(true),
      reject: this.decision(false),
    });
  }

  registerJobs(handlers: JobHandlers): void {
    handlers.register(UMA_RECEIVE_STEP_JOB, (job, tools) => this.stepLater(job, tools));
  }

  async receive(
    ctx: RequestContext,
    input: SandboxUmaReceiveRequest,
  ): Promise<IncomingTransaction> {
    const receiverAddress = await this.receiverAddressOf(ctx, input);
    const receiver = parseUmaAddress(receiverAddress);
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
          amount: BigInt(input.receivingCurrencyAmount),
          currency: input.receivingCurrencyCode,
          umaAddress: sender.address?.address ?? input.senderUmaAddress,
          internalAccountId: account.id,
          customerId: account.customerId,
        },
        plan,
        at,
        realNow,
      ),
    );
    return (await this.transactions.viewOne(row)) as IncomingTransaction;
  }

  /** The receiver: its UMA address, or the address of the customer named instead. */
  private async receiverAddressOf(
    ctx: RequestContext,
    input: SandboxUmaReceiveRequest,
  ): Promise<string> {
    if (input.receiverUmaAddress !== undefined) return input.receiverUmaAddress;
    if (input.customerId === undefined) {
      throw invalidInput("Name the receiver: receiverUmaAddress or customerId", {
        errors: [fieldError("body.receiverUmaAddress", "required when customerId is absent")],
      });
    }
    return (await this.customers.getActiveRow(ctx, input.customerId)).umaAddress;
  }

  /**
   * The platform's decision on a payment still PENDING (a sender whose
   * payments stay pending): approved, it completes and is credited; rejected,
   * it fails and nothing is credited. Either way its outcome ends there, so
   * no later step applies (stepsApplied passes every step).
   */
  private decision(approved: boolean): TransactionAction {
    return {
      from: ["PENDING"],
      run: (row, times) => this.decide(row, approved, times.at),
    };
  }

  private *decide(row: TransactionRow, approved: boolean, at: Date): SqlProgram<TransactionRow> {
    const moved = yield* moveTransaction(
      row,
      {
        status: approved ? "COMPLETED" : "FAILED",
        stepsApplied: DECIDED,
      },
      at,
    );
    if (approved) yield* this.moneyEffects(row, { afterSeconds: 0, status: "COMPLETED" }, at);
    return moved;
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
