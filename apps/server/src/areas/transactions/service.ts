import { ApiError, notFound } from "../../errors.js";
import { q } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import type { Query } from "../../http/operation-types.js";
import { type RequestContext, type Services, scopedTo } from "../../http/context.js";
import { decodeCursor, newestPage, toPage, type Page } from "../../http/pagination.js";
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
 * been initiated without the approval step: steps of the approval's
 * database transaction, returning the moved row.
 */
export type ApprovalHandler = (
  row: TransactionRow,
  times: ChangeTimes,
) => SqlProgram<TransactionRow>;

export class TransactionService {
  private readonly approvals = new Map<TransactionType, ApprovalHandler>();

  constructor(private readonly services: Services) {}

  /** Each area that creates approvable transactions says how they proceed. */
  onApproval(type: TransactionType, handler: ApprovalHandler): void {
    if (this.approvals.has(type)) throw new Error(`approval handler for ${type} registered twice`);
    this.approvals.set(type, handler);
  }

  private async getRow(ctx: RequestContext, id: string): Promise<TransactionRow> {
    const row = await this.services.data.one(
      q.selectFrom("Transaction").selectAll().where("id", "=", id).$call(scopedTo(ctx)),
    );
    if (!row) throw notFound("TRANSACTION_NOT_FOUND", `Transaction ${id} not found`);
    return row;
  }

  async get(ctx: RequestContext, id: string): Promise<Transaction> {
    return toTransaction(await this.getRow(ctx, id));
  }

  async list(ctx: RequestContext, filter: TransactionFilter): Promise<Page<Transaction>> {
    // An agent sees its own customer's transactions only.
    let query = q.selectFrom("Transaction").selectAll().$call(scopedTo(ctx));
    if (filter.customerId) query = query.where("customerId", "=", filter.customerId);
    if (filter.internalAccountId)
      query = query.where("internalAccountId", "=", filter.internalAccountId);
    if (filter.type) query = query.where("type", "=", filter.type);
    if (filter.status) query = query.where("status", "=", filter.status);
    if (filter.createdAfter) query = query.where("createdAt", ">=", new Date(filter.createdAfter));
    if (filter.createdBefore) query = query.where("createdAt", "<", new Date(filter.createdBefore));
    const rows = await this.services.data.all(
      query.$call(newestPage(decodeCursor(filter.cursor), filter.limit)),
    );
    return toPage(rows, filter.limit, toTransaction);
  }

  /** The platform approves what an agent initiated above its approval threshold. */
  async approve(ctx: RequestContext, id: string): Promise<Transaction> {
    const row = await this.getRow(ctx, id);
    const notAwaiting = () =>
      new ApiError(
        409,
        "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL",
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
      const moved = await this.services.data.transaction(() => handler(row, times));
      return toTransaction(moved);
    } catch (err) {
      // Approved (or otherwise moved) by a concurrent request first.
      if (err instanceof StaleTransactionError) throw notAwaiting();
      throw err;
    }
  }
}
