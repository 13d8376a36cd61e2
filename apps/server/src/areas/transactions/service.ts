import type { Schemas } from "@payments-sandbox/client";
import { sql } from "kysely";
import { ApiError, invalidInput, notFound } from "../../errors.js";
import { q } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import type { Query } from "../../http/operation-types.js";
import { type RequestContext, type Services, scopedTo } from "../../http/context.js";
import { countedPage, decodeCursor, pageInOrder, type Page } from "../../http/pagination.js";
import { decideAction, type ActionDecision } from "../agents/actions.js";
import { requirePermission } from "../agents/policy.js";
import { toCardTransaction } from "../card-transactions/view.js";
import {
  confirmReceipt,
  INCOMING_KINDS,
  OUTGOING_KINDS,
  ownersOf,
  ownersQuery,
  StaleTransactionError,
  toTransaction,
  type Transaction,
  type TransactionKind,
  type TransactionRow,
  type TransactionStatus,
} from "./records.js";

/** A transaction as the API shows it: incoming, outgoing, or a card purchase. */
export type AnyTransaction = Schemas["TransactionOneOf"];

/** The query of listTransactions, as validated. */
export type TransactionFilter = Query<"listTransactions">;

/** Times of a state change: sandbox time for records, real time for scheduling jobs. */
export interface ChangeTimes {
  platformId: string;
  at: Date;
  realNow: Date;
}

/** A decision on a transaction (approve, reject, cancel): the states it applies in and its steps. */
export interface TransactionAction {
  from: readonly TransactionStatus[];
  /** Steps of the decision's database transaction, returning the moved row. */
  run: (row: TransactionRow, times: ChangeTimes) => SqlProgram<TransactionRow>;
}

export interface TransactionActions {
  /** An agent's transaction over its threshold proceeds; a pending incoming payment is accepted. */
  approve?: TransactionAction;
  reject?: TransactionAction;
  /** A bank transfer that has not settled yet is called back. */
  cancel?: TransactionAction;
}

export class TransactionService {
  private readonly actions = new Map<string, TransactionActions>();

  constructor(private readonly services: Services) {}

  /** Each area says which decisions its transactions take, and how they proceed. */
  onDecisions(kind: TransactionKind, actions: TransactionActions): void {
    if (this.actions.has(kind)) throw new Error(`decisions for ${kind} registered twice`);
    this.actions.set(kind, actions);
  }

  async getRow(ctx: RequestContext, id: string): Promise<TransactionRow> {
    const row = await this.services.data.one(
      q.selectFrom("Transaction").selectAll().where("id", "=", id).$call(scopedTo(ctx)),
    );
    if (!row) throw notFound("TRANSACTION_NOT_FOUND", `Transaction ${id} not found`);
    return row;
  }

  /** The API view of rows, with their owners read in one query. */
  async view(rows: TransactionRow[]): Promise<Transaction[]> {
    const query = ownersQuery(rows);
    const owners = ownersOf(rows, query ? await this.services.data.all(query) : []);
    return rows.map((row) => toTransaction(row, owners.get(row.id)!));
  }

  /** The API view of one row. */
  async viewOne(row: TransactionRow): Promise<Transaction> {
    const [view] = await this.view([row]);
    return view!;
  }

  /** One transaction, a card transaction included (their ids tell them apart). */
  async get(ctx: RequestContext, id: string): Promise<AnyTransaction> {
    requirePermission(ctx, "VIEW_TRANSACTIONS");
    if (id.startsWith("CardTransaction:")) {
      const row = await this.services.data.one(
        q.selectFrom("CardTransaction").selectAll().where("id", "=", id).$call(scopedTo(ctx)),
      );
      if (!row) throw notFound("TRANSACTION_NOT_FOUND", `Transaction ${id} not found`);
      return toCardTransaction(row);
    }
    return this.viewOne(await this.getRow(ctx, id));
  }

  /**
   * Transactions and card transactions in one list: the page is cut from
   * the union of both tables' (createdAt, id), then its rows are read by id.
   */
  async list(
    ctx: RequestContext,
    filter: TransactionFilter,
  ): Promise<Page<AnyTransaction> & { totalCount: number }> {
    requirePermission(ctx, "VIEW_TRANSACTIONS");
    const both = this.movements(ctx, filter).unionAll(this.purchases(ctx, filter));
    const page = await countedPage(
      this.services.data,
      {
        rows: q
          .selectFrom(both.as("t"))
          .selectAll()
          .$call(pageInOrder(filter.sortOrder, decodeCursor(filter.cursor), filter.limit)),
        count: q.selectFrom(both.as("t")).select((eb) => eb.fn.countAll().as("count")),
      },
      filter.limit,
      (row) => row,
    );
    const idsOf = (card: boolean) =>
      page.data.filter((row) => (Number(row.card) === 1) === card).map((row) => row.id);
    const [movementIds, purchaseIds] = [idsOf(false), idsOf(true)];
    const [movements, purchases] = await Promise.all([
      movementIds.length === 0
        ? []
        : this.services.data.all(
            q.selectFrom("Transaction").selectAll().where("id", "in", movementIds),
          ),
      purchaseIds.length === 0
        ? []
        : this.services.data.all(
            q.selectFrom("CardTransaction").selectAll().where("id", "in", purchaseIds),
          ),
    ]);
    const views = new Map<string, AnyTransaction>();
    for (const view of await this.view(movements)) views.set(view.id, view);
    for (const row of purchases) views.set(row.id, toCardTransaction(row));
    return { ...page, data: page.data.map((row) => views.get(row.id)!) };
  }

  /** The (id, createdAt) of the Transaction rows the filter keeps. */
  private movements(ctx: RequestContext, filter: TransactionFilter) {
    // An agent sees its own customer's transactions only.
    let query = q.selectFrom("Transaction").$call(scopedTo(ctx));
    if (filter.customerId) {
      // The platform's own transactions are listed under its id.
      query =
        filter.customerId === ctx.platformId
          ? query.where("customerId", "is", null)
          : query.where("customerId", "=", filter.customerId);
    }
    if (filter.platformCustomerId) {
      query = query.where("customerId", "in", (eb) =>
        eb
          .selectFrom("Customer")
          .select("id")
          .where("platformId", "=", ctx.platformId)
          .where("platformCustomerId", "=", filter.platformCustomerId!),
      );
    }
    const id = filter.accountIdentifier;
    if (id) {
      query = query.where((eb) =>
        eb.or([
          eb("internalAccountId", "=", id),
          eb("externalAccountId", "=", id),
          eb("umaAddress", "=", id),
        ]),
      );
    }
    // The sender of an incoming payment is its counterparty; of an outgoing one, the internal account.
    const sender = filter.senderAccountIdentifier;
    if (sender) {
      query = query.where((eb) =>
        eb.or([
          eb.and([
            eb("type", "in", INCOMING_KINDS),
            eb.or([eb("externalAccountId", "=", sender), eb("umaAddress", "=", sender)]),
          ]),
          eb.and([eb("type", "in", OUTGOING_KINDS), eb("internalAccountId", "=", sender)]),
        ]),
      );
    }
    const receiver = filter.receiverAccountIdentifier;
    if (receiver) {
      query = query.where((eb) =>
        eb.or([
          eb.and([eb("type", "in", INCOMING_KINDS), eb("internalAccountId", "=", receiver)]),
          eb.and([
            eb("type", "in", OUTGOING_KINDS),
            eb.or([eb("externalAccountId", "=", receiver), eb("umaAddress", "=", receiver)]),
          ]),
        ]),
      );
    }
    if (filter.type) {
      query = query.where(
        "type",
        "in",
        filter.type === "INCOMING" ? INCOMING_KINDS : OUTGOING_KINDS,
      );
    }
    if (filter.status) query = query.where("status", "=", filter.status);
    if (filter.reference) query = query.where("reference", "=", filter.reference);
    if (filter.startDate) query = query.where("createdAt", ">=", new Date(filter.startDate));
    if (filter.endDate) query = query.where("createdAt", "<=", new Date(filter.endDate));
    return query.select((eb) => ["id", "createdAt", eb.val(0).as("card")]);
  }

  /**
   * The (id, createdAt) of the card transactions the filter keeps: a card
   * purchase (DEBIT) sends money from the account it draws on to a merchant,
   * a card credit (CREDIT) brings money from a merchant to it; each belongs
   * to a customer (never the platform), and has no type or reference to
   * match.
   */
  private purchases(ctx: RequestContext, filter: TransactionFilter) {
    let query = q.selectFrom("CardTransaction").$call(scopedTo(ctx));
    const none =
      filter.type !== undefined ||
      filter.reference !== undefined ||
      filter.customerId === ctx.platformId;
    if (none) query = query.where(sql<boolean>`1 = 0`);
    if (filter.customerId) query = query.where("customerId", "=", filter.customerId);
    if (filter.platformCustomerId) {
      query = query.where("platformCustomerId", "=", filter.platformCustomerId);
    }
    if (filter.accountIdentifier) {
      query = query.where("fundingSourceId", "=", filter.accountIdentifier);
    }
    const sides = [
      [filter.senderAccountIdentifier, "DEBIT"],
      [filter.receiverAccountIdentifier, "CREDIT"],
    ] as const;
    for (const [account, direction] of sides) {
      if (account) {
        query = query.where("fundingSourceId", "=", account).where("direction", "=", direction);
      }
    }
    if (filter.status) query = query.where("status", "=", filter.status);
    if (filter.startDate) query = query.where("createdAt", ">=", new Date(filter.startDate));
    if (filter.endDate) query = query.where("createdAt", "<=", new Date(filter.endDate));
    return query.select((eb) => ["id", "createdAt", eb.val(1).as("card")]);
  }

  /**
   * The platform approves what an agent initiated above its threshold, or a
   * pending incoming payment. An agent's action waiting on the transaction
   * moves with it, in the same database transaction.
   */
  approve(ctx: RequestContext, id: string): Promise<Transaction> {
    return this.decide(ctx, id, { decision: "approve" });
  }

  /** `outcome` says how an agent's action waiting on it ends (REJECTED, with a reason, or FAILED). */
  reject(
    ctx: RequestContext,
    id: string,
    outcome: Omit<ActionDecision, "decision"> = {},
  ): Promise<Transaction> {
    return this.decide(ctx, id, { ...outcome, decision: "reject" });
  }

  cancel(ctx: RequestContext, id: string): Promise<Transaction> {
    return this.decide(ctx, id, { decision: "cancel" });
  }

  async confirmReceipt(
    ctx: RequestContext,
    id: string,
    input: Schemas["ConfirmReceiptDeliveryRequest"] | undefined,
  ): Promise<Transaction> {
    const row = await this.getRow(ctx, id);
    const at = ctx.clock.now();
    const confirmedAt = input?.receiptDeliveryConfirmedAt
      ? new Date(input.receiptDeliveryConfirmedAt)
      : at;
    const updated = await this.services.data.transaction(() =>
      confirmReceipt(row, confirmedAt, at),
    );
    return this.viewOne(updated);
  }

  private async decide(
    ctx: RequestContext,
    id: string,
    outcome: ActionDecision,
  ): Promise<Transaction> {
    const { decision } = outcome;
    const row = await this.getRow(ctx, id);
    const action = this.actions.get(row.type)?.[decision];
    if (decision === "cancel" && !action) {
      throw invalidInput(
        `Only bank transfers can be cancelled; ${id} is not one (use reject for a pending incoming payment)`,
      );
    }
    const refused = () =>
      decision === "cancel"
        ? new ApiError(
            409,
            "TRANSACTION_NOT_CANCELLABLE",
            `Transaction ${id} is ${row.status}: it has settled or is past the point where it can be cancelled`,
          )
        : new ApiError(
            409,
            "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL",
            `Transaction ${id} is ${row.status} and does not wait for the platform's decision`,
          );
    if (!action || !action.from.includes(row.status as TransactionStatus)) throw refused();
    const times = {
      platformId: ctx.platformId,
      at: ctx.clock.now(),
      realNow: this.services.clock.now(),
    };
    try {
      const moved = await this.services.data.transaction(function* () {
        const decided = yield* action.run(row, times);
        if (row.agentId !== null) yield* decideAction(row, outcome, times.at);
        return decided;
      });
      return await this.viewOne(moved);
    } catch (err) {
      // Decided (or otherwise moved) by a concurrent request or job first.
      if (err instanceof StaleTransactionError) throw refused();
      throw err;
    }
  }
}
