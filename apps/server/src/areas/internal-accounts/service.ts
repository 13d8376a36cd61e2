import { sql } from "kysely";
import type { Schemas } from "@payments-sandbox/client";
import { one, q, type Row } from "../../db/query.js";
import { notFound } from "../../errors.js";
import type { Query } from "../../http/operation-types.js";
import { type RequestContext, type Services, scopedTo } from "../../http/context.js";
import { type Page, newestCountedPage } from "../../http/pagination.js";
import { credit } from "../ledger/ledger.js";
import { createTransaction } from "../transactions/records.js";
import { toInternalAccount, type InternalAccount } from "./view.js";

type AuthMethod = Schemas["AuthMethod"];
type AccountRow = Row<"InternalAccount">;
type AuthMethodRow = Row<"AuthMethod">;

/** The queries of the two lists, as validated. */
export type CustomerAccountFilter = Query<"listCustomerInternalAccounts">;
export type PlatformAccountFilter = Query<"listPlatformInternalAccounts">;

export function toAuthMethod(row: AuthMethodRow): AuthMethod {
  return {
    id: row.id,
    accountId: row.accountId,
    type: row.type as AuthMethod["type"],
    nickname: row.nickname,
    ...(row.credentialId !== null ? { credentialId: row.credentialId } : {}),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export class InternalAccountService {
  constructor(private readonly services: Services) {}

  /** An account of this platform (and of the agent's customer when an agent asks). */
  async getRow(ctx: RequestContext, id: string): Promise<AccountRow> {
    const row = await this.services.data.one(
      q.selectFrom("InternalAccount").selectAll().where("id", "=", id).$call(scopedTo(ctx)),
    );
    if (!row) throw notFound("REFERENCE_NOT_FOUND", `Internal account ${id} not found`);
    return row;
  }

  /**
   * The accounts of the platform's customers, newest first. An agent sees
   * its customer's, and of those only the ones its policy lets it use.
   */
  async listCustomerAccounts(
    ctx: RequestContext,
    filter: Omit<CustomerAccountFilter, "customerId"> & { customerId?: string | undefined },
  ): Promise<Page<InternalAccount> & { totalCount: number }> {
    let query = q
      .selectFrom("InternalAccount")
      .where("platformId", "=", ctx.platformId)
      .where("customerId", "is not", null);
    if (ctx.agent) {
      query = query.where("customerId", "=", ctx.agent.customerId);
      const allowed = ctx.agent.policy.accountRestrictions?.allowedAccountIds;
      if (allowed != null) {
        query =
          allowed.length === 0
            ? query.where(sql<boolean>`false`)
            : query.where("id", "in", allowed);
      }
    }
    if (filter.customerId) query = query.where("customerId", "=", filter.customerId);
    if (filter.currency) query = query.where("currency", "=", filter.currency);
    if (filter.type) query = query.where("type", "=", filter.type);
    return newestCountedPage(this.services.data, query, filter, toInternalAccount);
  }

  /** The platform's own accounts: one per supported currency, so never more than a page. */
  async listPlatformAccounts(
    ctx: RequestContext,
    filter: PlatformAccountFilter,
  ): Promise<{ data: InternalAccount[] }> {
    let query = q
      .selectFrom("InternalAccount")
      .selectAll()
      .where("platformId", "=", ctx.platformId)
      .where("customerId", "is", null);
    if (filter.currency) query = query.where("currency", "=", filter.currency);
    if (filter.type) query = query.where("type", "=", filter.type);
    const rows = await this.services.data.all(query.orderBy("createdAt").orderBy("id"));
    return { data: rows.map(toInternalAccount) };
  }

  /** Sandbox funding: a FUNDING transaction that credits the account through the ledger. */
  async fund(ctx: RequestContext, id: string, amount: number): Promise<InternalAccount> {
    const account = await this.getRow(ctx, id);
    const at = ctx.clock.now();
    const row = await this.services.data.transaction(function* () {
      const funding = yield* createTransaction(
        {
          platformId: ctx.platformId,
          type: "FUNDING",
          status: "COMPLETED",
          amount: BigInt(amount),
          currency: account.currency,
          internalAccountId: id,
          customerId: account.customerId,
        },
        at,
      );
      yield* credit({
        platformId: ctx.platformId,
        accountId: id,
        amount: BigInt(amount),
        kind: "SANDBOX_FUNDING",
        reference: funding.id,
        at,
      });
      return yield* one(q.selectFrom("InternalAccount").selectAll().where("id", "=", id));
    });
    if (!row) throw notFound("REFERENCE_NOT_FOUND", `Internal account ${id} not found`);
    return toInternalAccount(row);
  }
}
