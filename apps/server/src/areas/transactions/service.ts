import { ApiError, notFound } from "../../errors.js";
import type { Tx } from "../../db/client.js";
import type { Query } from "../../http/operation-types.js";
import { type RequestContext, type Services, visibleTo } from "../../http/context.js";
import {
  afterCursor,
  decodeCursor,
  newestFirst,
  toPage,
  type Page,
} from "../../http/pagination.js";
import {
  StaleTransactionError,
  toTransaction,
  type Transaction,
  type TransactionRow,
  type TransactionType,
} from "./records.js";

/** The query of listTransactions, as validated. */
export type TransactionFilter = Query<"listTransactions">;

/** Times of a state change: sandbox time for records, real time for scheduling jobs. */
export interface ChangeTimes {
  platformId: string;
  at: Date;
  realNow: Date;
}

/**
 * Lets an AWAITING_APPROVAL transaction of one type proceed as if it had just
 * been initiated without the approval step; runs inside the approval's
 * database transaction and returns the moved row.
 */
export type ApprovalHandler = (
  tx: Tx,
  row: TransactionRow,
  times: ChangeTimes,
) => Promise<TransactionRow>;

export class TransactionService {
  private readonly approvals = new Map<TransactionType, ApprovalHandler>();

  constructor(private readonly services: Services) {}

  /** Each area that creates approvable transactions says how they proceed. */
  onApproval(type: TransactionType, handler: ApprovalHandler): void {
    if (this.approvals.has(type)) throw new Error(`approval handler for ${type} registered twice`);
    this.approvals.set(type, handler);
  }

  private async getRow(ctx: RequestContext, id: string): Promise<TransactionRow> {
    const row = await this.services.db.transaction.findFirst({
      where: { id, ...visibleTo(ctx) },
    });
    if (!row) throw notFound("TRANSACTION_NOT_FOUND", `Transaction ${id} not found`);
    return row;
  }

  async get(ctx: RequestContext, id: string): Promise<Transaction> {
    return toTransaction(await this.getRow(ctx, id));
  }

  async list(ctx: RequestContext, filter: TransactionFilter): Promise<Page<Transaction>> {
    const conditions: object[] = [{ platformId: ctx.platformId }];
    // An agent sees its own customer's transactions only.
    if (ctx.agent) conditions.push({ customerId: ctx.agent.customerId });
    if (filter.customerId) conditions.push({ customerId: filter.customerId });
    if (filter.internalAccountId) conditions.push({ internalAccountId: filter.internalAccountId });
    if (filter.type) conditions.push({ type: filter.type });
    if (filter.status) conditions.push({ status: filter.status });
    if (filter.createdAfter) conditions.push({ createdAt: { gte: new Date(filter.createdAfter) } });
    if (filter.createdBefore)
      conditions.push({ createdAt: { lt: new Date(filter.createdBefore) } });
    conditions.push(afterCursor(decodeCursor(filter.cursor)));
    const rows = await this.services.db.transaction.findMany({
      where: { AND: conditions },
      orderBy: newestFirst,
      take: filter.limit + 1,
    });
    return toPage(rows, filter.limit, toTransaction);
  }

  /** The platform approves what an agent initiated above its approval threshold. */
  async approve(ctx: RequestContext, id: string): Promise<Transaction> {
    const row = await this.getRow(ctx, id);
    const notAwaiting = () =>
      new ApiError(
        409,
        "INVALID_STATE_TRANSITION",
        `Only transactions in AWAITING_APPROVAL can be approved; this one is ${row.status}`,
      );
    const handler = this.approvals.get(row.type as TransactionType);
    if (row.status !== "AWAITING_APPROVAL" || !handler) throw notAwaiting();
    const times = {
      platformId: ctx.platformId,
      at: ctx.clock.now(),
      realNow: this.services.clock.now(),
    };
    try {
      const moved = await this.services.db.$transaction((tx) => handler(tx, row, times));
      return toTransaction(moved);
    } catch (err) {
      // Approved (or otherwise moved) by a concurrent request first.
      if (err instanceof StaleTransactionError) throw notAwaiting();
      throw err;
    }
  }
}
