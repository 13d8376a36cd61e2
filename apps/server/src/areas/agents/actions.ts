import type { Schemas } from "@payments-sandbox/client";
import { emitEvent } from "../../events/outbox.js";
import { found, insert, one, q, run, type Row } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { newId } from "../../ids.js";
import { toQuote, type QuoteRow } from "../quotes/records.js";
import type { AgentDecision } from "./policy.js";
import { chargeAgent } from "./usage.js";

// Every movement an agent starts (a transfer, a quote's execution) is an
// AgentAction: the platform's handle to approve, reject and audit it. The
// action and the movement's Transaction row are written in one database
// transaction, with the agent's usage and, when the action waits for the
// platform, its AGENT_ACTION.PENDING_APPROVAL event (the outbox rule). The
// platform's decision moves the transaction through the same steps as
// POST /transactions/{transactionId}/approve (areas/transactions/service.ts),
// and the action with it (decideAction below).

export type AgentActionRow = Row<"AgentAction">;
export type AgentAction = Schemas["AgentAction"];
export type AgentActionType = Schemas["AgentActionType"];
export type AgentActionStatus = Schemas["AgentActionStatus"];

/** What an agent's movement asks for, as its action records it. */
export type ActionRequest =
  | { type: "EXECUTE_QUOTE"; quoteId: string }
  | {
      type: "TRANSFER_IN" | "TRANSFER_OUT";
      amount: bigint;
      currency: string;
      sourceAccountId: string;
      destinationAccountId: string;
    };

/** The parts of an action's view that live in other tables. */
export interface ActionContext {
  platformCustomerId: string;
  quote?: QuoteRow | undefined;
  transaction?: Schemas["TransactionOneOf"] | undefined;
}

/** The API view of an action. Its transaction shows once the action went ahead. */
export function toAgentAction(row: AgentActionRow, context: ActionContext): AgentAction {
  const wentAhead = row.status === "APPROVED" || row.status === "FAILED";
  return {
    id: row.id,
    agentId: row.agentId,
    customerId: row.customerId,
    platformCustomerId: context.platformCustomerId,
    status: row.status as AgentActionStatus,
    type: row.type as AgentActionType,
    ...(context.quote ? { quote: toQuote(context.quote) } : {}),
    ...(row.amount !== null &&
    row.currency !== null &&
    row.sourceAccountId !== null &&
    row.destinationAccountId !== null
      ? {
          transferDetails: {
            amount: Number(row.amount),
            currency: row.currency,
            sourceAccountId: row.sourceAccountId,
            destinationAccountId: row.destinationAccountId,
          },
        }
      : {}),
    ...(wentAhead && context.transaction ? { transaction: context.transaction } : {}),
    ...(row.rejectionReason !== null ? { rejectionReason: row.rejectionReason } : {}),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function* platformCustomerIdOf(platformId: string, customerId: string): SqlProgram<string> {
  const customer = yield* found(
    q
      .selectFrom("Customer")
      .select("platformCustomerId")
      .where("id", "=", customerId)
      .where("platformId", "=", platformId),
    `customer ${customerId}`,
  );
  return customer.platformCustomerId;
}

/**
 * Records an agent's movement, inside the movement's own database
 * transaction: counts it against the agent's daily and monthly limits (403
 * VELOCITY_LIMIT_EXCEEDED rolls everything back), and writes its action,
 * APPROVED when the movement went ahead, PENDING_APPROVAL (with its event)
 * when it waits for the platform.
 */
export function* submitAgentAction(submission: {
  platformId: string;
  transactionId: string;
  decision: AgentDecision;
  request: ActionRequest;
  waiting: boolean;
  at: Date;
}): SqlProgram<AgentActionRow> {
  const { platformId, decision, request, at } = submission;
  yield* chargeAgent({
    platformId,
    transactionId: submission.transactionId,
    decision,
    at,
  });
  const transfer = request.type === "EXECUTE_QUOTE" ? undefined : request;
  const row: AgentActionRow = {
    id: newId("AgentAction"),
    platformId,
    agentId: decision.agent.agentId,
    customerId: decision.agent.customerId,
    type: request.type,
    status: submission.waiting ? "PENDING_APPROVAL" : "APPROVED",
    transactionId: submission.transactionId,
    quoteId: request.type === "EXECUTE_QUOTE" ? request.quoteId : null,
    amount: transfer?.amount ?? null,
    currency: transfer?.currency ?? null,
    sourceAccountId: transfer?.sourceAccountId ?? null,
    destinationAccountId: transfer?.destinationAccountId ?? null,
    rejectionReason: null,
    createdAt: at,
    updatedAt: at,
  };
  yield* insert("AgentAction", row);
  if (submission.waiting) {
    const quote =
      row.quoteId === null
        ? undefined
        : yield* one(
            q
              .selectFrom("Quote")
              .selectAll()
              .where("id", "=", row.quoteId)
              .where("platformId", "=", platformId),
          );
    const platformCustomerId = yield* platformCustomerIdOf(platformId, row.customerId);
    yield* emitEvent({
      platformId,
      type: "AGENT_ACTION.PENDING_APPROVAL",
      objectId: row.id,
      data: toAgentAction(row, { platformCustomerId, quote }),
      at,
    });
  }
  return row;
}

/** How the platform decided a transaction an agent's action holds. */
export interface ActionDecision {
  decision: "approve" | "reject" | "cancel";
  /** The platform's words, kept on a rejected action. */
  reason?: string | undefined;
  /** Approved, but it could not go ahead (its quote had expired). */
  failed?: boolean | undefined;
}

/**
 * Moves the waiting action of a transaction the platform just decided, in
 * the decision's database transaction. Conditional on it still waiting:
 * a transaction without a waiting action (not an agent's, or decided
 * already) changes nothing here.
 */
export function* decideAction(
  transaction: { id: string; platformId: string },
  outcome: ActionDecision,
  at: Date,
): SqlProgram<void> {
  const status: AgentActionStatus = outcome.failed
    ? "FAILED"
    : outcome.decision === "approve"
      ? "APPROVED"
      : "REJECTED";
  yield* run(
    q
      .updateTable("AgentAction")
      .set({
        status,
        updatedAt: at,
        ...(status === "REJECTED" && outcome.reason !== undefined
          ? { rejectionReason: outcome.reason }
          : {}),
      })
      .where("transactionId", "=", transaction.id)
      .where("platformId", "=", transaction.platformId)
      .where("status", "=", "PENDING_APPROVAL"),
  );
}
