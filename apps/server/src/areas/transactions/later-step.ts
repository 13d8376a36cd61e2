import type { PaymentStep } from "@payments-sandbox/sandbox-rules";
import { one, q } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import type { JobTools } from "../../jobs/registry.js";
import { scheduleJob } from "../../jobs/schedule.js";
import type { IndexedStep } from "./step-plan.js";
import { isIncoming, moveTransaction, type TransactionRow } from "./records.js";

/** The payload of a job that applies one later step of a payment (see step-plan.ts). */
export interface StepPayload {
  transactionId: string;
  stepIndex: number;
  step: PaymentStep;
}

/**
 * Applies a scheduled step in one transaction: a step already applied is
 * skipped; one whose predecessor is not applied yet throws, so the job is
 * retried rather than the step skipped (jobs run in due order, so that only
 * happens when an earlier step failed to apply). `effects` does the area's
 * part (money, related records) with the transaction as it was before.
 */
export async function applyLaterStep(
  tools: JobTools,
  { transactionId, stepIndex, step }: StepPayload,
  effects: (row: TransactionRow, step: PaymentStep, at: Date) => SqlProgram<void>,
): Promise<void> {
  const at = tools.clock.now();
  await tools.data.transaction(function* () {
    const row = yield* one(q.selectFrom("Transaction").selectAll().where("id", "=", transactionId));
    if (!row || row.stepsApplied > stepIndex) return;
    if (row.stepsApplied < stepIndex) throw new Error(`step ${stepIndex - 1} not applied yet`);
    yield* moveTransaction(
      row,
      {
        status: step.status,
        stepsApplied: stepIndex + 1,
        ...(step.status === "FAILED" && step.failureReason
          ? { failureReason: step.failureReason }
          : {}),
        // Only money taken from an internal account goes back to it.
        ...(step.status === "FAILED" && !isIncoming(row) && row.internalAccountId !== null
          ? { refund: step.refund }
          : {}),
      },
      at,
    );
    yield* effects(row, step, at);
  });
}

/** Schedules each later step of a plan as a job of `kind`, due when the step is. */
export function* scheduleLaterSteps(
  later: readonly IndexedStep[],
  transaction: { id: string; platformId: string },
  kind: string,
  realNow: Date,
): SqlProgram<void> {
  for (const { stepIndex, step } of later) {
    const payload: StepPayload = { transactionId: transaction.id, stepIndex, step };
    yield* scheduleJob({
      platformId: transaction.platformId,
      kind,
      payload,
      delaySeconds: step.afterSeconds,
      now: realNow,
    });
  }
}
