import type { CardPullResolution } from "@sandbox/sandbox-rules";
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
 * counts in the pulled total, what the transaction still holds goes back to
 * the funding source, and the transaction takes the status the sandbox table
 * names (EXCEPTION).
 */
export function pullEffect(
  current: { pullPending: number; pullTotal: bigint; heldAmount: bigint; status: string },
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
  return {
    pullPending,
    pullTotal: current.pullTotal - pullAmount,
    heldAmount: 0n,
    status: resolution.transactionStatus,
    release: current.heldAmount,
  };
}
