import { ApiError } from "../../errors.js";
import type { RequestContext } from "../../http/context.js";

// What an agent's policy allows. A request authenticated with BasicAuth (the
// platform itself) is never limited here.

/** Refuses an amount above the agent's `maxTransactionAmount`. */
export function enforceAgentLimit(ctx: RequestContext, amount: bigint): void {
  if (ctx.agent && amount > ctx.agent.maxTransactionAmount) {
    throw new ApiError(
      400,
      "AMOUNT_OUT_OF_RANGE",
      `The amount ${amount} is above this agent's maxTransactionAmount of ${ctx.agent.maxTransactionAmount}`,
      { details: { maxTransactionAmount: Number(ctx.agent.maxTransactionAmount) } },
    );
  }
}

/** Whether the amount must wait in PENDING_AUTHORIZATION for the platform to approve it. */
export function needsApproval(ctx: RequestContext, amount: bigint): boolean {
  return ctx.agent !== undefined && amount > ctx.agent.approvalRequiredAbove;
}
