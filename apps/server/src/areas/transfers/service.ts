import type { Schemas } from "@sandbox/client";
import { transferOutcome, type TransferOutcome } from "@sandbox/sandbox-rules";
import { found, one, q } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { ApiError } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { DueJob, JobHandlers, JobTools } from "../../jobs/registry.js";
import { scheduleJob } from "../../jobs/schedule.js";
import { enforceAgentLimit, needsApproval } from "../agents/policy.js";
import type { ExternalAccountService } from "../external-accounts/service.js";
import type { InternalAccountService } from "../internal-accounts/service.js";
import { debitOrRefuse } from "../ledger/balance-guard.js";
import { credit } from "../ledger/ledger.js";
import {
  createTransaction,
  moveTransaction,
  toTransaction,
  type NewTransaction,
  type Transaction,
  type TransactionChange,
  type TransactionRow,
} from "../transactions/records.js";
import type { ChangeTimes, TransactionService } from "../transactions/service.js";

export type TransferRequest = Schemas["TransferRequest"];
export type TransferType = "TRANSFER_IN" | "TRANSFER_OUT";

/** The delayed end of a transfer (sandbox suffix 005). */
export const TRANSFER_SETTLE_JOB = "transfer.settle";
interface SettlePayload {
  transactionId: string;
  outcome: TransferOutcome;
}

function statusAfterSettling(outcome: TransferOutcome): TransactionChange {
  return outcome.kind === "SUCCEED"
    ? { status: "COMPLETED" }
    : { status: "FAILED", failureReason: outcome.failureReason };
}

/** The status a transfer has once started: settled at once, or PENDING until its job. */
function statusAfterStart(outcome: TransferOutcome): TransactionChange {
  return outcome.delaySeconds > 0 ? { status: "PENDING" } : statusAfterSettling(outcome);
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
    transactions: TransactionService,
  ) {
    for (const type of ["TRANSFER_IN", "TRANSFER_OUT"] as const) {
      transactions.onApproval(type, (row, times) => this.approve(row, times));
    }
  }

  registerJobs(handlers: JobHandlers): void {
    handlers.register(TRANSFER_SETTLE_JOB, (job, tools) => this.settleLater(job, tools));
  }

  async create(
    ctx: RequestContext,
    type: TransferType,
    input: TransferRequest,
  ): Promise<Transaction> {
    const account = await this.accounts.getRow(ctx, input.internalAccountId);
    const external = await this.externalAccounts.getRow(ctx, input.externalAccountId);
    if (account.currency !== external.currency) {
      throw new ApiError(
        400,
        "INVALID_CURRENCY",
        `A transfer moves one currency: the internal account holds ${account.currency} but the external account is ${external.currency}`,
      );
    }
    const amount = BigInt(input.amount);
    enforceAgentLimit(ctx, amount);
    const awaiting = needsApproval(ctx, amount);
    const times: ChangeTimes = {
      platformId: ctx.platformId,
      at: ctx.clock.now(),
      realNow: this.services.clock.now(),
    };
    const opening: NewTransaction = {
      platformId: ctx.platformId,
      type,
      status: "AWAITING_APPROVAL",
      direction: type === "TRANSFER_IN" ? "CREDIT" : "DEBIT",
      amount,
      currency: account.currency,
      internalAccountId: account.id,
      externalAccountId: external.id,
      customerId: account.customerId,
      agentId: ctx.agent?.agentId ?? null,
    };
    const outcome = awaiting ? undefined : transferOutcome(external.identifier).outcome;
    const row = await this.services.data.transaction(() => this.start(opening, outcome, times));
    return toTransaction(row);
  }

  /** Records a new transfer; without an outcome it waits for approval, else it starts. */
  private *start(
    opening: NewTransaction,
    outcome: TransferOutcome | undefined,
    times: ChangeTimes,
  ): SqlProgram<TransactionRow> {
    if (!outcome) return yield* createTransaction(opening, times.at);
    const created = yield* createTransaction(
      { ...opening, ...statusAfterStart(outcome) },
      times.at,
    );
    yield* this.moveMoney(created, outcome, times);
    return created;
  }

  /** An agent's AWAITING_APPROVAL transfer, approved: it proceeds like a direct one. */
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
    const moved = yield* moveTransaction(row, statusAfterStart(outcome), times.at);
    yield* this.moveMoney(moved, outcome, times);
    return moved;
  }

  /**
   * The money of a transfer that starts now: a transfer out is debited
   * (guarded: 400 INSUFFICIENT_BALANCE rolls everything back); an outcome due
   * at once is settled, a later one scheduled.
   */
  private *moveMoney(
    row: TransactionRow,
    outcome: TransferOutcome,
    times: ChangeTimes,
  ): SqlProgram<void> {
    if (row.type === "TRANSFER_OUT") {
      yield* debitOrRefuse({
        platformId: row.platformId,
        accountId: row.internalAccountId ?? "",
        amount: row.amount,
        kind: "TRANSFER_OUT",
        reference: row.id,
        at: times.at,
      });
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
    const posting = {
      platformId: row.platformId,
      accountId: row.internalAccountId ?? "",
      amount: row.amount,
      reference: row.id,
      at,
    };
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
    yield* moveTransaction(row, statusAfterSettling(outcome), at);
    yield* this.settleMoney(row, outcome, at);
  }
}
