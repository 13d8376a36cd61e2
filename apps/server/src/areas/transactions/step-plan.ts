import type { PaymentStep, RefundOutcome } from "@payments-sandbox/sandbox-rules";

/** A step of a sandbox payment outcome with its place in the list. */
export interface IndexedStep {
  stepIndex: number;
  step: PaymentStep;
}

/** Where a payment stands once its immediate steps are applied. */
export interface PlannedState {
  status: "PENDING" | "PROCESSING" | "COMPLETED" | "FAILED";
  failureReason?: string;
  /** An outgoing payment's money given back (or not) after a failure. */
  refund?: RefundOutcome;
  stepsApplied: number;
  /** Whether it completed on the way (it may still end FAILED, e.g. a returned payout). */
  completed: boolean;
}

export interface StepPlan {
  /** Steps due at once (leading steps with `afterSeconds` 0): applied by the request. */
  now: IndexedStep[];
  /** The rest: one job each, `afterSeconds` after the payment starts. */
  later: IndexedStep[];
  state: PlannedState;
}

/**
 * Splits a payment outcome (from packages/sandbox-rules) into what happens
 * in the request and what is scheduled, and the status the request leaves.
 */
export function planSteps<W extends "PENDING" | "PROCESSING">(
  steps: readonly PaymentStep[],
  /** The status while no step has happened yet. */
  waiting: W,
): StepPlan & { state: { status: W | "COMPLETED" | "FAILED" } } {
  const now: IndexedStep[] = [];
  const later: IndexedStep[] = [];
  for (const [stepIndex, step] of steps.entries()) {
    if (later.length === 0 && step.afterSeconds === 0) now.push({ stepIndex, step });
    else later.push({ stepIndex, step });
  }
  const last = now.at(-1)?.step;
  const state: PlannedState & { status: W | "COMPLETED" | "FAILED" } = {
    status: last?.status ?? waiting,
    stepsApplied: now.length,
    completed: now.some(({ step }) => step.status === "COMPLETED"),
  };
  if (last?.status === "FAILED") {
    if (last.failureReason) state.failureReason = last.failureReason;
    state.refund = last.refund;
  }
  return { now, later, state };
}
