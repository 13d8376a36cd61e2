import { q } from "../../db/query.js";
import { notFound } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { TransactionService } from "../transactions/service.js";
import { toAgentAction, type AgentAction, type AgentActionRow } from "./actions.js";

/** Reading agents' actions, and their API views with what they refer to in other tables. */
export class AgentActionViews {
  constructor(
    private readonly services: Services,
    private readonly transactions: TransactionService,
  ) {}

  /** The action recording the movement an agent just started (its transaction's). */
  async ofTransaction(ctx: RequestContext, transactionId: string): Promise<AgentAction> {
    const row = await this.services.data.one(
      q
        .selectFrom("AgentAction")
        .selectAll()
        .where("transactionId", "=", transactionId)
        .where("platformId", "=", ctx.platformId),
    );
    if (!row) throw new Error(`transaction ${transactionId} has no agent action`);
    return this.view(row);
  }

  /** One action of one agent of this platform (404 otherwise). */
  async row(ctx: RequestContext, agentId: string, actionId: string): Promise<AgentActionRow> {
    const row = await this.services.data.one(
      q
        .selectFrom("AgentAction")
        .selectAll()
        .where("id", "=", actionId)
        .where("agentId", "=", agentId)
        .where("platformId", "=", ctx.platformId),
    );
    if (!row) throw notFound("REFERENCE_NOT_FOUND", `Agent action ${actionId} not found`);
    return row;
  }

  async view(row: AgentActionRow): Promise<AgentAction> {
    const [view] = await this.views([row]);
    return view!;
  }

  /** Actions with their customers' platform ids, quotes and transactions, read in one query each. */
  async views(rows: AgentActionRow[]): Promise<AgentAction[]> {
    const first = rows[0];
    if (!first) return [];
    const platformId = first.platformId;
    const ids = (pick: (row: AgentActionRow) => string | null) => [
      ...new Set(rows.map(pick).filter((id): id is string => id !== null)),
    ];
    const data = this.services.data;
    const customerIds = ids((row) => row.customerId);
    const quoteIds = ids((row) => row.quoteId);
    const transactionIds = ids((row) =>
      row.status === "APPROVED" || row.status === "FAILED" ? row.transactionId : null,
    );
    const [customers, quotes, transactionRows] = await Promise.all([
      data.all(
        q
          .selectFrom("Customer")
          .select(["id", "platformCustomerId"])
          .where("platformId", "=", platformId)
          .where("id", "in", customerIds),
      ),
      quoteIds.length === 0
        ? []
        : data.all(
            q
              .selectFrom("Quote")
              .selectAll()
              .where("platformId", "=", platformId)
              .where("id", "in", quoteIds),
          ),
      transactionIds.length === 0
        ? []
        : data.all(
            q
              .selectFrom("Transaction")
              .selectAll()
              .where("platformId", "=", platformId)
              .where("id", "in", transactionIds),
          ),
    ]);
    const transactions = await this.transactions.view(transactionRows);
    const byId = <T extends { id: string }>(items: readonly T[]) =>
      new Map(items.map((item) => [item.id, item]));
    const [customerById, quoteById, transactionById] = [
      byId(customers),
      byId(quotes),
      byId(transactions),
    ];
    return rows.map((row) =>
      toAgentAction(row, {
        platformCustomerId: customerById.get(row.customerId)?.platformCustomerId ?? "",
        quote: row.quoteId === null ? undefined : quoteById.get(row.quoteId),
        transaction: transactionById.get(row.transactionId),
      }),
    );
  }
}
