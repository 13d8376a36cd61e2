import type { Schemas } from "@payments-sandbox/client";
import type { Database } from "../../db/database.js";
import { one, q, run } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { ApiError } from "../../errors.js";
import type { TransactionStatus } from "../transactions/records.js";
import type { AgentDecision, AgentPolicy } from "./policy.js";

// An agent's usage of its daily and monthly limits is read from the
// movements it started: each such Transaction row carries the amount its
// policy counted (in the policy's currency) and when (sandbox time). Days and
// months are UTC ones of the platform's sandbox clock. A movement that did not
// go through gives its amount back; it still counts as one started that day.

export type AgentUsage = Schemas["AgentUsage"];

/** Statuses of a movement whose money did not go (or came back). */
const NOT_SPENT: readonly TransactionStatus[] = ["FAILED", "REJECTED", "EXPIRED", "REFUNDED"];

interface Period {
  dayStart: Date;
  nextDay: Date;
  monthStart: Date;
  nextMonth: Date;
}

function periodOf(now: Date): Period {
  const [y, m, d] = [now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()];
  return {
    dayStart: new Date(Date.UTC(y, m, d)),
    nextDay: new Date(Date.UTC(y, m, d + 1)),
    monthStart: new Date(Date.UTC(y, m, 1)),
    nextMonth: new Date(Date.UTC(y, m + 1, 1)),
  };
}

/** The agent's movements of the current month, summed for its limits. */
function usageQuery(platformId: string, agentId: string, period: Period) {
  return q
    .selectFrom("Transaction")
    .select((eb) => {
      const today = eb("agentUsageAt", ">=", period.dayStart);
      const spent = eb("status", "not in", NOT_SPENT);
      const amount = eb.ref("agentUsageAmount");
      return [
        eb.fn.sum(eb.case().when(today).then(eb.lit(1)).else(eb.lit(0)).end()).as("dayCount"),
        eb.fn
          .sum(
            eb
              .case()
              .when(eb.and([today, spent]))
              .then(amount)
              .else(eb.lit(0))
              .end(),
          )
          .as("daySpend"),
        eb.fn.sum(eb.case().when(spent).then(amount).else(eb.lit(0)).end()).as("monthSpend"),
      ];
    })
    .where("platformId", "=", platformId)
    .where("agentId", "=", agentId)
    .where("agentUsageAt", ">=", period.monthStart)
    .where("agentUsageAt", "<", period.nextMonth);
}

/** A SUM as either driver returns it (null over no rows, text on PostgreSQL). */
function total(value: unknown): bigint {
  return value === null || value === undefined ? 0n : BigInt(value as string | number | bigint);
}

interface Totals {
  dayCount: bigint;
  daySpend: bigint;
  monthSpend: bigint;
}

function totalsOf(row: Record<string, unknown> | undefined): Totals {
  return {
    dayCount: total(row?.dayCount),
    daySpend: total(row?.daySpend),
    monthSpend: total(row?.monthSpend),
  };
}

function isoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/** The agent's usage as the API shows it, at `now` on its platform's sandbox clock. */
export async function usageOf(
  data: Database,
  agent: { platformId: string; id: string },
  now: Date,
): Promise<AgentUsage> {
  const period = periodOf(now);
  const totals = totalsOf(await data.one(usageQuery(agent.platformId, agent.id, period)));
  return {
    dailyTransactionCount: Number(totals.dayCount),
    dailySpend: Number(totals.daySpend),
    dailyResetDate: isoDate(period.nextDay),
    monthlySpend: Number(totals.monthSpend),
    monthlyResetMonth: isoDate(period.nextMonth).slice(0, 7),
  };
}

function velocityExceeded(message: string, details: Record<string, unknown>): ApiError {
  return new ApiError(403, "VELOCITY_LIMIT_EXCEEDED", message, { details });
}

/** 403 VELOCITY_LIMIT_EXCEEDED when one more movement of `counted` breaks a daily or monthly limit. */
function checkLimits(policy: AgentPolicy, totals: Totals, counted: bigint): void {
  const limits = policy.spendingLimits;
  const { currency } = limits;
  if (
    limits.dailyTransactionLimit !== undefined &&
    totals.dayCount + 1n > BigInt(limits.dailyTransactionLimit)
  ) {
    throw velocityExceeded(
      `This agent has started ${totals.dayCount} movements today, its spendingLimits.dailyTransactionLimit`,
      {
        limit: "spendingLimits.dailyTransactionLimit",
        dailyTransactionLimit: limits.dailyTransactionLimit,
        dailyTransactionCount: Number(totals.dayCount),
      },
    );
  }
  const caps = [
    { limit: "dailyLimit", cap: limits.dailyLimit, used: totals.daySpend, usedAs: "dailySpend" },
    {
      limit: "monthlyLimit",
      cap: limits.monthlyLimit,
      used: totals.monthSpend,
      usedAs: "monthlySpend",
    },
  ] as const;
  for (const { limit, cap, used, usedAs } of caps) {
    if (cap == null || used + counted <= BigInt(cap)) continue;
    const period = limit === "dailyLimit" ? "today" : "this month";
    throw velocityExceeded(
      `This movement would take the agent's spend ${period} to ${used + counted} ${currency}, above its spendingLimits.${limit} of ${cap} ${currency}`,
      {
        limit: `spendingLimits.${limit}`,
        [limit]: cap,
        [usedAs]: Number(used),
        amount: Number(counted),
        currency,
      },
    );
  }
}

/**
 * Counts a movement an agent started (its Transaction row, written in the
 * same database transaction) against the agent's daily and monthly limits.
 * Past one, 403 VELOCITY_LIMIT_EXCEEDED, and the caller's whole transaction
 * rolls back.
 */
export function* chargeAgent(charge: {
  platformId: string;
  transactionId: string;
  decision: AgentDecision;
  at: Date;
}): SqlProgram<void> {
  const { agent, counted } = charge.decision;
  // Taken first, this row lock orders the agent's concurrent movements on
  // PostgreSQL: the usage read below then sees every one committed before it
  // (SQLite write transactions run one at a time anyway).
  yield* run(
    q
      .updateTable("Agent")
      .set((eb) => ({ updatedAt: eb.ref("updatedAt") }))
      .where("id", "=", agent.agentId)
      .where("platformId", "=", charge.platformId),
  );
  const totals = totalsOf(
    yield* one(usageQuery(charge.platformId, agent.agentId, periodOf(charge.at))),
  );
  checkLimits(agent.policy, totals, counted);
  yield* run(
    q
      .updateTable("Transaction")
      .set({ agentUsageAmount: counted, agentUsageAt: charge.at })
      .where("id", "=", charge.transactionId)
      .where("platformId", "=", charge.platformId),
  );
}
