import type { Schemas } from "@payments-sandbox/client";
import { q } from "../../db/query.js";
import { ApiError, fieldError, invalidInput, type FieldError } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import { SUPPORTED_CURRENCIES, valueIn } from "../quotes/exchange-rates.js";
import type { AgentPolicy } from "./policy.js";

// A policy as the platform sends it, on a new agent or as a partial update:
// merged with the current one, then checked for what the schema cannot say.
// How a policy limits an agent's requests is policy.ts.

/** A limit kept through a change of the limits' currency, converted at the sandbox's rates. */
function recast(amount: number, from: string, to: string): number {
  const value = valueIn(BigInt(amount), from, to);
  if (value === undefined) {
    throw new ApiError(
      400,
      "INVALID_CURRENCY",
      `policy.spendingLimits.currency: the sandbox has no rates for ${to}; supported currencies: ${SUPPORTED_CURRENCIES.join(", ")}`,
    );
  }
  return Number(value);
}

/** The policy after a partial update (PATCH /agents/{agentId}/policy). */
export function mergePolicy(
  current: AgentPolicy,
  change: Schemas["AgentPolicyUpdateRequest"],
): AgentPolicy {
  const limits = current.spendingLimits;
  const update = change.spendingLimits ?? {};
  const currency = update.currency ?? limits.currency;
  const kept = (amount: number) => recast(amount, limits.currency, currency);
  const keptOrNull = (amount: number | null | undefined) =>
    amount === null || amount === undefined ? amount : kept(amount);
  const spendingLimits: AgentPolicy["spendingLimits"] = {
    currency,
    perTransactionLimit: update.perTransactionLimit ?? kept(limits.perTransactionLimit),
  };
  const daily = "dailyLimit" in update ? update.dailyLimit : keptOrNull(limits.dailyLimit);
  if (daily !== undefined) spendingLimits.dailyLimit = daily;
  const count = update.dailyTransactionLimit ?? limits.dailyTransactionLimit;
  if (count !== undefined) spendingLimits.dailyTransactionLimit = count;
  const monthly = "monthlyLimit" in update ? update.monthlyLimit : keptOrNull(limits.monthlyLimit);
  if (monthly !== undefined) spendingLimits.monthlyLimit = monthly;
  const merged: AgentPolicy = {
    permissions: change.permissions ?? current.permissions,
    defaultExecutionMode: change.defaultExecutionMode ?? current.defaultExecutionMode,
    spendingLimits,
  };
  const restrictions = change.accountRestrictions ?? current.accountRestrictions;
  if (restrictions !== undefined) merged.accountRestrictions = restrictions;
  const thresholds =
    change.approvalThresholds !== undefined
      ? { ...current.approvalThresholds, ...change.approvalThresholds }
      : current.approvalThresholds;
  if (thresholds !== undefined) merged.approvalThresholds = thresholds;
  return merged;
}

/**
 * What the schema cannot say: currencies the sandbox can convert, a
 * threshold's currency, and accounts that are the customer's own internal
 * accounts, each with at most one rule.
 */
export async function checkPolicy(
  services: Services,
  ctx: RequestContext,
  customerId: string,
  policy: AgentPolicy,
): Promise<void> {
  const currencies: [string, string | undefined][] = [
    ["policy.spendingLimits.currency", policy.spendingLimits.currency],
    ["policy.approvalThresholds.currency", policy.approvalThresholds?.currency],
  ];
  for (const [field, currency] of currencies) {
    if (currency !== undefined && !SUPPORTED_CURRENCIES.includes(currency)) {
      throw new ApiError(
        400,
        "INVALID_CURRENCY",
        `${field}: the sandbox has no rates for ${currency}; supported currencies: ${SUPPORTED_CURRENCIES.join(", ")}`,
      );
    }
  }
  const threshold = policy.approvalThresholds;
  if (threshold?.amount != null && threshold.currency === undefined) {
    throw invalidInput("approvalThresholds.currency is required when amount is set", {
      errors: [fieldError("body.policy.approvalThresholds.currency", "required with amount")],
    });
  }
  const named = [
    ...(policy.accountRestrictions?.allowedAccountIds ?? []).map((id, i) => ({
      id,
      field: `body.policy.accountRestrictions.allowedAccountIds.${i}`,
    })),
    ...(policy.accountRestrictions?.accountRules ?? []).map((rule, i) => ({
      id: rule.accountId,
      field: `body.policy.accountRestrictions.accountRules.${i}.accountId`,
    })),
  ];
  if (named.length === 0) return;
  const owned = new Set(
    (
      await services.data.all(
        q
          .selectFrom("InternalAccount")
          .select("id")
          .where("platformId", "=", ctx.platformId)
          .where("customerId", "=", customerId)
          .where(
            "id",
            "in",
            named.map((n) => n.id),
          ),
      )
    ).map((row) => row.id),
  );
  const errors: FieldError[] = named
    .filter((n) => !owned.has(n.id))
    .map((n) => fieldError(n.field, "not an internal account of the customer"));
  const ruled = new Set<string>();
  (policy.accountRestrictions?.accountRules ?? []).forEach((rule, i) => {
    if (ruled.has(rule.accountId)) {
      errors.push(
        fieldError(
          `body.policy.accountRestrictions.accountRules.${i}.accountId`,
          "a second rule for the same account",
        ),
      );
    }
    ruled.add(rule.accountId);
  });
  const first = errors[0];
  if (first !== undefined) {
    throw invalidInput(`${first.field}: ${first.message}`, { errors });
  }
}
