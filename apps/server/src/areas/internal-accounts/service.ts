import type { Schemas } from "@sandbox/client";
import { insert, one, q, type Row } from "../../db/query.js";
import { ApiError, notFound } from "../../errors.js";
import type { Query } from "../../http/operation-types.js";
import { type RequestContext, type Services, scopedTo } from "../../http/context.js";
import { decodeCursor, newestPage, toPage, type Page } from "../../http/pagination.js";
import { newId } from "../../ids.js";
import { credit } from "../ledger/ledger.js";
import { createTransaction } from "../transactions/records.js";
import type { CustomerService } from "../customers/service.js";

export type InternalAccount = Schemas["InternalAccount"];
export type InternalAccountCreate = Schemas["InternalAccountCreate"];
type AuthMethod = Schemas["AuthMethod"];
type AccountRow = Row<"InternalAccount">;
type AuthMethodRow = Row<"AuthMethod">;

/** The query of listInternalAccounts, as validated. */
export type InternalAccountFilter = Query<"listInternalAccounts">;

export function toInternalAccount(row: AccountRow): InternalAccount {
  return {
    id: row.id,
    customerId: row.customerId,
    type: row.type as InternalAccount["type"],
    currency: row.currency,
    balance: Number(row.balance),
    status: row.status as InternalAccount["status"],
    privacyEnabled: row.privacyEnabled,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

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
  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
  ) {}

  async create(ctx: RequestContext, input: InternalAccountCreate): Promise<InternalAccount> {
    const customer = await this.customers.getActiveRow(ctx, input.customerId);
    const now = ctx.clock.now();
    const accountId = newId("InternalAccount");

    let email: string | undefined;
    if (input.type === "EMBEDDED_WALLET") {
      // The wallet's first credential is an EMAIL_OTP one on the customer's email.
      email = customer.email ?? undefined;
      if (!email) {
        throw new ApiError(
          400,
          "MISSING_MANDATORY_USER_INFO",
          "An embedded wallet needs the customer's email address for its first EMAIL_OTP credential",
          {
            details: { field: "email" },
          },
        );
      }
    }

    const account: AccountRow = {
      id: accountId,
      platformId: ctx.platformId,
      customerId: customer.id,
      type: input.type,
      currency: input.currency,
      balance: 0n,
      status: "ACTIVE",
      privacyEnabled: false,
      walletPrivateKey: null,
      createdAt: now,
      updatedAt: now,
    };
    const authMethods: AuthMethodRow[] = email
      ? [
          {
            id: newId("AuthMethod"),
            platformId: ctx.platformId,
            accountId,
            type: "EMAIL_OTP",
            nickname: email,
            credentialId: null,
            oauthIssuer: null,
            oauthAudience: null,
            oauthSubject: null,
            passkeyPublicKey: null,
            passkeyCounter: null,
            passkeyTransports: null,
            otpTargetPrivateKey: null,
            otpExpiresAt: null,
            createdAt: now,
            updatedAt: now,
          },
        ]
      : [];
    await this.services.data.transaction(function* () {
      yield* insert("InternalAccount", account);
      for (const method of authMethods) yield* insert("AuthMethod", method);
    });
    const result = toInternalAccount(account);
    return authMethods.length > 0
      ? { ...result, authMethods: authMethods.map(toAuthMethod) }
      : result;
  }

  /** An account of this platform (and of the agent's customer when an agent asks). */
  async getRow(ctx: RequestContext, id: string): Promise<AccountRow> {
    const row = await this.services.data.one(
      q.selectFrom("InternalAccount").selectAll().where("id", "=", id).$call(scopedTo(ctx)),
    );
    if (!row) throw notFound("REFERENCE_NOT_FOUND", `Internal account ${id} not found`);
    return row;
  }

  async get(ctx: RequestContext, id: string): Promise<InternalAccount> {
    return toInternalAccount(await this.getRow(ctx, id));
  }

  async list(ctx: RequestContext, filter: InternalAccountFilter): Promise<Page<InternalAccount>> {
    let query = q
      .selectFrom("InternalAccount")
      .selectAll()
      .where("platformId", "=", ctx.platformId);
    if (filter.customerId) query = query.where("customerId", "=", filter.customerId);
    if (filter.currency) query = query.where("currency", "=", filter.currency);
    if (filter.type) query = query.where("type", "=", filter.type);
    const rows = await this.services.data.all(
      query.$call(newestPage(decodeCursor(filter.cursor), filter.limit)),
    );
    return toPage(rows, filter.limit, toInternalAccount);
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
          direction: "CREDIT",
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
