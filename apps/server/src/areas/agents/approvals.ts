import { q } from "../../db/query.js";
import { ApiError } from "../../errors.js";
import type { Query } from "../../http/operation-types.js";
import { countedPage, decodeCursor, pageInOrder, type Page } from "../../http/pagination.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { TransactionService } from "../transactions/service.js";
import type { AgentAction, AgentActionRow } from "./actions.js";
import type { AgentActionViews } from "./action-views.js";

// The platform's decisions on agents' actions that wait for it. A decision
// moves the held transaction through the transactions' own decisions, which
// move the action with it in the same database transaction (actions.ts).

function decidedAlready(action: AgentActionRow): ApiError {
  return new ApiError(
    409,
    "INVALID_STATE_TRANSITION",
    `Agent action ${action.id} is ${action.status}: only a PENDING_APPROVAL action can be decided`,
  );
}

/** Listing and deciding the actions waiting for the platform's approval. */
export class AgentApprovals {
  constructor(
    private readonly services: Services,
    private readonly transactions: TransactionService,
    private readonly actions: AgentActionViews,
  ) {}

  /** GET /agents/approvals: the platform's actions waiting for its decision. */
  async pending(
    ctx: RequestContext,
    filter: Query<"listAgentApprovals">,
  ): Promise<Page<AgentAction> & { totalCount: number }> {
    let query = q
      .selectFrom("AgentAction")
      .where("platformId", "=", ctx.platformId)
      .where("status", "=", "PENDING_APPROVAL");
    if (filter.agentId) query = query.where("agentId", "=", filter.agentId);
    if (filter.customerId) query = query.where("customerId", "=", filter.customerId);
    if (filter.startDate) query = query.where("createdAt", ">=", new Date(filter.startDate));
    if (filter.endDate) query = query.where("createdAt", "<=", new Date(filter.endDate));
    const page = await countedPage(
      this.services.data,
      {
        rows: query
          .selectAll()
          .$call(pageInOrder(filter.sortOrder, decodeCursor(filter.cursor), filter.limit)),
        count: query.select((eb) => eb.fn.countAll().as("count")),
      },
      filter.limit,
      (row) => row,
    );
    return { ...page, data: await this.actions.views(page.data) };
  }

  /**
   * POST /agents/{agentId}/actions/{actionId}/approve: the held transaction
   * is approved through the transactions' decisions, which move the action
   * in the same database transaction. A quote that expired while it waited
   * is refused instead, and the action FAILS.
   */
  async approve(ctx: RequestContext, agentId: string, actionId: string): Promise<AgentAction> {
    const action = await this.pendingAction(ctx, agentId, actionId);
    const expired = await this.quoteExpired(ctx, action);
    await this.decided(() =>
      expired
        ? this.transactions.reject(ctx, action.transactionId, { failed: true })
        : this.transactions.approve(ctx, action.transactionId),
    );
    return this.actions.view(await this.actions.row(ctx, agentId, actionId));
  }

  /** POST /agents/{agentId}/actions/{actionId}/reject: nothing moves; the reason is kept. */
  async reject(
    ctx: RequestContext,
    agentId: string,
    actionId: string,
    reason: string | undefined,
  ): Promise<AgentAction> {
    const action = await this.pendingAction(ctx, agentId, actionId);
    await this.decided(() => this.transactions.reject(ctx, action.transactionId, { reason }));
    return this.actions.view(await this.actions.row(ctx, agentId, actionId));
  }

  private async pendingAction(
    ctx: RequestContext,
    agentId: string,
    actionId: string,
  ): Promise<AgentActionRow> {
    const action = await this.actions.row(ctx, agentId, actionId);
    if (action.status !== "PENDING_APPROVAL") throw decidedAlready(action);
    return action;
  }

  /** A decision that lost the race to another one is the same 409 as one made before. */
  private async decided(decide: () => Promise<unknown>): Promise<void> {
    try {
      await decide();
    } catch (err) {
      if (err instanceof ApiError && err.code === "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL") {
        throw new ApiError(409, "INVALID_STATE_TRANSITION", "This action was decided already");
      }
      throw err;
    }
  }

  private async quoteExpired(ctx: RequestContext, action: AgentActionRow): Promise<boolean> {
    if (action.quoteId === null) return false;
    const quote = await this.services.data.one(
      q
        .selectFrom("Quote")
        .select("expiresAt")
        .where("id", "=", action.quoteId)
        .where("platformId", "=", ctx.platformId),
    );
    return quote !== undefined && quote.expiresAt <= ctx.clock.now();
  }
}
