import type { Schemas } from "@payments-sandbox/client";
import { ApiError } from "../../errors.js";
import type { AgentPrincipal, RequestContext } from "../../http/context.js";
import { SUPPORTED_CURRENCIES, valueIn } from "../quotes/exchange-rates.js";

// What an agent's policy allows, checked by the services before they act:
// its permissions, the accounts it may use, its limit per movement and when
// a movement waits for the platform's approval. The daily and monthly limits
// need the agent's usage and are checked in the movement's own database
// transaction (usage.ts). A request authenticated with BasicAuth (the
// platform itself) is never limited here.

export type AgentPolicy = Schemas["AgentPolicy"];
export type AgentPermission = Schemas["AgentPermission"];

/** 403 FORBIDDEN, naming the first missing one, unless the acting agent's policy grants every permission given. */
export function requirePermission(ctx: RequestContext, ...permissions: AgentPermission[]): void {
  if (!ctx.agent) return;
  const granted = new Set(ctx.agent.policy.permissions);
  const missing = permissions.find((permission) => !granted.has(permission));
  if (missing !== undefined) {
    throw new ApiError(403, "FORBIDDEN", `This agent's policy does not grant ${missing}`, {
      details: { permission: missing },
    });
  }
}

/** A money movement an agent starts, on one internal account of its customer. */
export interface Movement {
  /** The internal account money leaves (for a transfer in, the one it enters). */
  accountId: string;
  /** Minor units of the account's currency. */
  amount: bigint;
  currency: string;
}

/** What the policy makes of a movement it allows. */
export interface AgentDecision {
  agent: AgentPrincipal;
  /** The movement waits in PENDING_AUTHORIZATION for the platform. */
  awaitingApproval: boolean;
  /** The amount in the policy's currency, as its daily and monthly limits count it. */
  counted: bigint;
}

/** An amount in the currency a limit is expressed in; 400 when no rate relates them. */
function inCurrency(movement: Movement, currency: string): bigint {
  const value = valueIn(movement.amount, movement.currency, currency);
  if (value === undefined) {
    throw new ApiError(
      400,
      "INVALID_CURRENCY",
      `An amount in ${movement.currency} cannot be compared with this agent's limits in ${currency}; the sandbox has rates for ${SUPPORTED_CURRENCIES.join(", ")}`,
    );
  }
  return value;
}

/**
 * Checks a movement against the acting agent's policy: the account must be
 * allowed (403 FORBIDDEN) and the amount within the limit per movement (400
 * AMOUNT_OUT_OF_RANGE), which is the account rule's when it has one, in the
 * account's currency. Decides whether it waits for approval: the execution
 * mode (the account rule's, else the default), or an amount above the
 * approval threshold. Undefined when the platform itself acts.
 */
export function checkMovement(ctx: RequestContext, movement: Movement): AgentDecision | undefined {
  const agent = ctx.agent;
  if (!agent) return undefined;
  const { policy } = agent;
  const allowed = policy.accountRestrictions?.allowedAccountIds;
  if (allowed != null && !allowed.includes(movement.accountId)) {
    throw new ApiError(
      403,
      "FORBIDDEN",
      `This agent's policy does not allow internal account ${movement.accountId}`,
      { details: { internalAccountId: movement.accountId } },
    );
  }
  const rule = policy.accountRestrictions?.accountRules?.find(
    (r) => r.accountId === movement.accountId,
  );
  const limits = policy.spendingLimits;
  const counted = inCurrency(movement, limits.currency);
  if (rule?.perTransactionLimit != null) {
    if (movement.amount > BigInt(rule.perTransactionLimit)) {
      throw new ApiError(
        400,
        "AMOUNT_OUT_OF_RANGE",
        `The amount ${movement.amount} ${movement.currency} is above this agent's perTransactionLimit of ${rule.perTransactionLimit} ${movement.currency} for account ${movement.accountId}`,
        {
          details: {
            limit: "accountRestrictions.accountRules.perTransactionLimit",
            perTransactionLimit: rule.perTransactionLimit,
            currency: movement.currency,
            internalAccountId: movement.accountId,
          },
        },
      );
    }
  } else if (counted > BigInt(limits.perTransactionLimit)) {
    throw new ApiError(
      400,
      "AMOUNT_OUT_OF_RANGE",
      `The amount ${counted} ${limits.currency} is above this agent's spendingLimits.perTransactionLimit of ${limits.perTransactionLimit} ${limits.currency}`,
      {
        details: {
          limit: "spendingLimits.perTransactionLimit",
          perTransactionLimit: limits.perTransactionLimit,
          currency: limits.currency,
        },
      },
    );
  }
  const mode = rule?.executionMode ?? policy.defaultExecutionMode;
  const threshold = policy.approvalThresholds;
  const aboveThreshold =
    threshold?.amount != null &&
    inCurrency(movement, threshold.currency ?? limits.currency) > BigInt(threshold.amount);
  return { agent, awaitingApproval: mode === "APPROVAL_REQUIRED" || aboveThreshold, counted };
}
