import type { Schemas } from "@payments-sandbox/client";
import type { Database } from "../../db/database.js";
import type { Row } from "../../db/query.js";
import type { AgentPolicy } from "./policy.js";
import { usageOf } from "./usage.js";

export type AgentRow = Row<"Agent">;
export type Agent = Schemas["Agent"];

/** The agent's policy (stored as JSON, as the platform set it). */
export function policyOf(row: AgentRow): AgentPolicy {
  return JSON.parse(row.policy) as AgentPolicy;
}

/** The API view of an agent, with its usage of its limits at `now`. */
export async function toAgent(data: Database, row: AgentRow, now: Date): Promise<Agent> {
  return {
    id: row.id,
    name: row.name,
    customerId: row.customerId,
    isPaused: row.isPaused,
    isConnected: row.deviceCodeRedeemedAt !== null,
    policy: policyOf(row),
    usage: await usageOf(data, row, now),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
