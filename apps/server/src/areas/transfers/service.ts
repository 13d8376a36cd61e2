import type { Schemas } from "@payments-sandbox/client";
import {
  transferOutcome,
  type RefundOutcome,
  type TransferOutcome,
} from "@payments-sandbox/sandbox-rules";
import { found, one, q } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { ApiError, fieldError, invalidInput, Reason } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { DueJob, JobHandlers, JobTools } from "../../jobs/registry.js";
import { scheduleJob } from "../../jobs/schedule.js";
import { checkMovement, requirePermission, type AgentDecision } from "../agents/policy.js";
import { submitAgentAction } from "../agents/actions.js";
import type { ExternalAccountService } from "../external-accounts/service.js";
import type { InternalAccountService } from "../internal-accounts/service.js";
import { debitOrRefuse } from "../ledger/balance-guard.js";
import { credit } from "../ledger/ledger.js";
import {
  createTransaction,
  moveTransaction,
  type NewTransaction,
  type Transaction,
  type TransactionChange,
  type TransactionRow,
} from "../transactions/records.js";
import type { ChangeTimes, TransactionService } from "../transactions/service.js";

export type TransferInRequest = Schemas["TransferInRequest"];
export type TransferOutRequest = Schemas["TransferOutRequest"];
export type TransferType = "TRANSFER_IN" | "TRANSFER_OUT";
/** Either request, by the side each account is on. */
export interface TransferInput {
  internalAccountId: string;
  externalAccountId: string;
  amount?: number | undefined;
  remittanceInformation?: string | undefined;
}

/** The delayed end of a transfer (sandbox suffix 005). */
export const TRANSFER_SETTLE_JOB = "transfer.settle";
interface SettlePayload {
  transactionId: string;
  outcome: TransferOutcome;
}

/** A ledger posting of a transfer's whole amount on its internal account. */
function postingOf(row: TransactionRow, at: Date) {
  return {
    platformId: row.platformId,
    accountId: row.internalAccountId ?? "",
    amount: row.amount,
    reference: row.id,
    at,
  };
}

/** The money of a failed transfer out goes back to its internal account. */
const REFUNDED: RefundOutcome = { status: "COMPLETED", reason: "TRANSACTION_FAILED" };

function statusAfterSettling(outcome: TransferOutcome, type: string): TransactionChange {
  if (outcome.kind === "SUCCEED") return { status: "COMPLETED" };
  return type === "TRANSFER_IN"
    ? { status: "FAILED", failureReason: outcome.incomingFailureReason }
    : { status: "FAILED", failureReason: outcome.outgoingFailureReason, refund: REFUNDED };
}

/** The status a transfer has once started: settled at once, or PENDING until its job. */
function statusAfterStart(outcome: TransferOutcome, type: string): TransactionChange {
  return outcome.delaySeconds > 0 ? { status: "PENDING" } : statusAfterSettling(outcome, type);
}

/**
 * Same-currency transfers between an internal and an external account.
 * Transfer in credits the internal account when it succeeds. Transfer out
 * debits it first (guarded, so it can never overdraw) and credits it back if
 * the transfer fails.
 */
export class TransferService {
  constructor(
    private readonly services: Services,
    private readonly accounts: InternalAccountService,
    private readonly externalAccounts: ExternalAccountService,
    private readonly transactions: TransactionService,
  ) {
    for (const type of ["TRANSFER_IN", "TRANSFER_OUT"] as const) {
      transactions.onDecisions(type, {
        approve: { from: ["PENDING_AUTHORIZATION"], run: (row, times) => this.approve(row, times) },
        reject: { from: ["PENDING_AUTHORIZATION"], run: (row, times) => this.refuse(row, times) },
        cancel: {
          from: ["PENDING_AUTHORIZATION", "PENDING"],
          run: (row, times) => this.cancel(row, times),
        },
      });
    }
  }

  registerJobs(handlers: JobHandlers): void {
    handlers.register(TRANSFER_SETTLE_JOB, (job, tools) => this.settleLater(job, tools));
  }

  async create(
    ctx: RequestContext,
    type: TransferType,
    input: TransferInput,
  ): Promise<Transaction> {
    requirePermission(ctx, "CREATE_TRANSFERS");
    const account = await this.accounts.getRow(ctx, input.internalAccountId);
    const external = await this.externalAccounts.getRow(ctx, input.externalAccountId);
    if (account.currency !== external.currency) {
      throw new ApiError(
        400,
        "INVALID_CURRENCY",
        `A transfer moves one currency: the internal account holds ${account.currency} but the external account is ${external.currency}`,
      );
    }
    const amount = await this.amountOf(type, input, account);
    const agent = checkMovement(ctx, {
      accountId: account.id,
      amount,
      currency: account.currency,
    });
    const awaiting = agent?.awaitingApproval ?? false;
    const times: ChangeTimes = {
      platformId: ctx.platformId,
      at: ctx.clock.now(),
      realNow: this.services.clock.now(),
    };
    const opening: NewTransaction = {
      platformId: ctx.platformId,
      type,
      status: "PENDING_AUTHORIZATION",
      amount,
      ...(input.remittanceInformation ? { reference: input.remittanceInformation } : {}),
      currency: account.currency,
      internalAccountId: account.id,
      externalAccountId: external.id,
      customerId: account.customerId,
      agentId: ctx.agent?.agentId ?? null,
    };
    const outcome = awaiting ? undefined : transferOutcome(external.identifier).outcome;
    const row = await this.services.data.transaction(() =>
      this.startAs(agent, opening, outcome, times),
    );
    return this.transactions.viewOne(row);
  }

  /**
   * Starts a transfer; an agent's counts against its daily and monthly limits
   * (or is refused) and is recorded as its action, waiting or gone ahead.
   */
  private *startAs(
    agent: AgentDecision | undefined,
    opening: NewTransaction,
    outcome: TransferOutcome | undefined,
    times: ChangeTimes,
  ): SqlProgram<TransactionRow> {
    const created = yield* this.start(opening, outcome, times);
    if (agent) {
      const inward = opening.type === "TRANSFER_IN";
      yield* submitAgentAction({
        platformId: created.platformId,
        transactionId: created.id,
        decision: agent,
        request: {
          type: opening.type as TransferType,
          amount: opening.amount,
          currency: opening.currency,
          sourceAccountId: (inward ? opening.externalAccountId : opening.internalAccountId) ?? "",
          destinationAccountId:
            (inward ? opening.internalAccountId : opening.externalAccountId) ?? "",
        },
        waiting: agent.awaitingApproval,
        at: times.at,
      });
    }
    return created;
  }

  /**
   * The amount asked for. A transfer out without one moves the whole balance;
   * a pull needs an amount, as there is no balance of the external account to take.
   */
  private async amountOf(
    type: TransferType,
    input: TransferInput,
    account: { id: string; balance: bigint },
  ): Promise<bigint> {
    if (input.amount !== undefined) {
      if (input.amount < 1) {
        throw invalidInput("amount must be at least 1 (minor units)", {
          errors: [fieldError("body.amount", "must be >= 1")],
        });
      }
      return BigInt(input.amount);
    }
    if (type === "TRANSFER_IN") {
      throw invalidInput("amount is required to pull from an external account", {
        errors: [fieldError("body.amount", "required for a transfer in")],
      });
    }
    if (account.balance <= 0n) {
      throw new ApiError(
        400,
        "INVALID_INPUT",
        `Account ${account.id} has no balance to transfer out`,
        {
          reason: Reason.insufficientBalance,
        },
      );
    }
    return account.balance;
  }

  /** Records a new transfer; without an outcome it waits for approval, else it starts. */
  private *start(
    opening: NewTransaction,
    outcome: TransferOutcome | undefined,
    times: ChangeTimes,
  ): SqlProgram<TransactionRow> {
    if (!outcome) return yield* createTransaction(opening, times.at);
    const created = yield* createTransaction(
      { ...opening, ...statusAfterStart(outcome, opening.type) },
      times.at,
    );
    yield* this.moveMoney(created, outcome, times);
    return created;
  }

  /** An agent's PENDING_AUTHORIZATION transfer, approved: it proceeds like a direct one. */
  private *approve(row: TransactionRow, times: ChangeTimes): SqlProgram<TransactionRow> {
    const external = yield* found(
      q
        .selectFrom("ExternalAccount")
        .select("identifier")
        .where("id", "=", row.externalAccountId ?? "")
        .where("platformId", "=", row.platformId),
      `external account of transaction ${row.id}`,
    );
    const { outcome } = transferOutcome(external.identifier);
    const moved = yield* moveTransaction(row, statusAfterStart(outcome, row.type), times.at);
    yield* this.moveMoney(moved, outcome, times);
    return moved;
  }

  /** Refused by the platform before anything moved. */
  private *refuse(row: TransactionRow, times: ChangeTimes): SqlProgram<TransactionRow> {
    return yield* moveTransaction(row, { status: "FAILED" }, times.at);
  }

  /**
   * Called back before it settled: a transfer out that was debited gets its
   * money back (the job that would settle it finds it no longer PENDING).
   */
  private *cancel(row: TransactionRow, times: ChangeTimes): SqlProgram<TransactionRow> {
    const debited = row.type === "TRANSFER_OUT" && row.status === "PENDING";
    const moved = yield* moveTransaction(
      row,
      {
        status: "FAILED",
        ...(debited ? { refund: { status: "COMPLETED", reason: "USER_CANCELLATION" } } : {}),
      },
      times.at,
    );
    if (debited) yield* credit({ ...postingOf(row, times.at), kind: "TRANSFER_OUT_REVERSAL" });
    return moved;
  }

  /**
   * The money of a transfer that starts now: a transfer out is debited
   * (guarded: a refusal, 400 INVALID_INPUT, rolls everything back); an outcome due
   * at once is settled, a later one scheduled.
   */
  private *moveMoney(
    row: TransactionRow,
    outcome: TransferOutcome,
    times: ChangeTimes,
  ): SqlProgram<void> {
    if (row.type === "TRANSFER_OUT") {
      yield* debitOrRefuse({ ...postingOf(row, times.at), kind: "TRANSFER_OUT" });
    }
    if (outcome.delaySeconds === 0) {
      yield* this.settleMoney(row, outcome, times.at);
      return;
    }
    const payload: SettlePayload = { transactionId: row.id, outcome };
    yield* scheduleJob({
      platformId: row.platformId,
      kind: TRANSFER_SETTLE_JOB,
      payload,
      delaySeconds: outcome.delaySeconds,
      now: times.realNow,
    });
  }

  /** Transfer in credits on success; a failed transfer out gets its money back. */
  private *settleMoney(row: TransactionRow, outcome: TransferOutcome, at: Date): SqlProgram<void> {
    const posting = postingOf(row, at);
    if (outcome.kind === "SUCCEED" && row.type === "TRANSFER_IN") {
      yield* credit({ ...posting, kind: "TRANSFER_IN" });
    }
    if (outcome.kind === "FAIL" && row.type === "TRANSFER_OUT") {
      yield* credit({ ...posting, kind: "TRANSFER_OUT_REVERSAL" });
    }
  }

  private async settleLater(job: DueJob, tools: JobTools): Promise<void> {
    const { transactionId, outcome } = job.payload as SettlePayload;
    const at = tools.clock.now();
    await tools.data.transaction(() => this.settle(job.platformId, transactionId, outcome, at));
  }

  private *settle(
    platformId: string,
    transactionId: string,
    outcome: TransferOutcome,
    at: Date,
  ): SqlProgram<void> {
    const row = yield* one(
      q
        .selectFrom("Transaction")
        .selectAll()
        .where("id", "=", transactionId)
        .where("platformId", "=", platformId),
    );
    // Settled already (a re-run after a crash): nothing left to do.
    if (!row || row.status !== "PENDING") return;
    yield* moveTransaction(row, statusAfterSettling(outcome, row.type), at);
    yield* this.settleMoney(row, outcome, at);
  }
}
