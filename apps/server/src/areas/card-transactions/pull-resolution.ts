import type { CardPullResolution } from "@payments-sandbox/sandbox-rules";
import type { CardTransactionStatus } from "./view.js";

/** What a resolved pull changes on its transaction. */
export interface PullEffect {
  pullPending: number;
  pullTotal: bigint;
  heldAmount: bigint;
  status: CardTransactionStatus;
  /** Goes back to the funding source. */
  release: bigint;
}

/**
 * A pull resolves CONFIRMED (nothing moves) or FAILED: then it no longer
 * counts in the pulled total, and what it took goes back to the funding
 * source, as far as that is still held or was settled with it (a part
 * already released went back then); the transaction takes the status the
 * sandbox table names (EXCEPTION). An authorization's pull is all held; a
 * financial authorization's pull is all settled.
 */
export function pullEffect(
  current: {
    pullPending: number;
    pullTotal: bigint;
    heldAmount: bigint;
    settledAmount: bigint;
    status: string;
  },
  pullAmount: bigint,
  resolution: CardPullResolution,
): PullEffect {
  const pullPending = current.pullPending - 1;
  if (resolution.pullStatus === "CONFIRMED") {
    return {
      pullPending,
      pullTotal: current.pullTotal,
      heldAmount: current.heldAmount,
      status: current.status as CardTransactionStatus,
      release: 0n,
    };
  }
  const fromHold = pullAmount < current.heldAmount ? pullAmount : current.heldAmount;
  const rest = pullAmount - fromHold;
  const fromSettled = rest < current.settledAmount ? rest : current.settledAmount;
  return {
    pullPending,
    pullTotal: current.pullTotal - pullAmount,
    heldAmount: current.heldAmount - fromHold,
    status: resolution.transactionStatus,
    release: fromHold + fromSettled,
  };
}
