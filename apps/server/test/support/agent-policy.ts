import type { Schemas } from "@payments-sandbox/client";

type AgentPolicy = Schemas["AgentPolicy"];

/** Transfers, quotes and reading, AUTO, 1000.00 USD a movement, approval above 500.00 USD. */
export function policy(changes: Partial<AgentPolicy> = {}): AgentPolicy {
  return {
    permissions: ["VIEW_TRANSACTIONS", "CREATE_TRANSFERS", "CREATE_QUOTES", "EXECUTE_QUOTES"],
    defaultExecutionMode: "AUTO",
    spendingLimits: { currency: "USD", perTransactionLimit: 100_000 },
    approvalThresholds: { currency: "USD", amount: 50_000 },
    ...changes,
  };
}
