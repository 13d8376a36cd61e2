import type { Schemas } from "@sandbox/client";
import type {
  InternalAccount as AccountRow,
  AuthMethod as AuthMethodRow,
} from "../../db/generated/sqlite/client.js";
import { ApiError, notFound } from "../../errors.js";
import type { Query } from "../../http/operation-types.js";
import { type RequestContext, type Services, visibleTo } from "../../http/context.js";
import {
  afterCursor,
  decodeCursor,
  newestFirst,
  toPage,
  type Page,
} from "../../http/pagination.js";
import { newId } from "../../ids.js";
import { credit } from "../ledger/ledger-prisma.js";
import { createTransaction } from "../transactions/records.js";
import type { CustomerService } from "../customers/service.js";

export type InternalAccount = Schemas["InternalAccount"];
export type InternalAccountCreate = Schemas["InternalAccountCreate"];
type AuthMethod = Schemas["AuthMethod"];

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
    const customer = await this.customers.getRow(ctx, input.customerId);
    const now = ctx.clock.now();
    const accountId = newId("InternalAccount");

    let email: string | undefined;
    if (input.type === "EMBEDDED_WALLET") {
      // The wallet's first credential is an EMAIL_OTP one on the customer's email.
      const info = JSON.parse(customer.personalInfo ?? customer.businessInfo ?? "{}") as {
        email?: string;
      };
      email = info.email;
      if (!email) {
        throw new ApiError(
          400,
          "MISSING_MANDATORY_USER_INFO",
          "An embedded wallet needs the customer's email address for its first EMAIL_OTP credential",
          {
            details: { field: customer.personalInfo ? "personalInfo.email" : "businessInfo.email" },
          },
        );
      }
    }

    const { account, authMethods } = await this.services.db.$transaction(async (tx) => {
      const account = await tx.internalAccount.create({
        data: {
          id: accountId,
          platformId: ctx.platformId,
          customerId: customer.id,
          type: input.type,
          currency: input.currency,
          balance: 0n,
          status: "ACTIVE",
          privacyEnabled: false,
          createdAt: now,
          updatedAt: now,
        },
      });
      const authMethods: AuthMethodRow[] = [];
      if (email) {
        authMethods.push(
          await tx.authMethod.create({
            data: {
              id: newId("AuthMethod"),
              platformId: ctx.platformId,
              accountId,
              type: "EMAIL_OTP",
              nickname: email,
              createdAt: now,
              updatedAt: now,
            },
          }),
        );
      }
      return { account, authMethods };
    });
    const result = toInternalAccount(account);
    return authMethods.length > 0
      ? { ...result, authMethods: authMethods.map(toAuthMethod) }
      : result;
  }

  /** An account of this platform (and of the agent's customer when an agent asks). */
  async getRow(ctx: RequestContext, id: string): Promise<AccountRow> {
    const row = await this.services.db.internalAccount.findFirst({
      where: { id, ...visibleTo(ctx) },
    });
    if (!row) throw notFound("ACCOUNT_NOT_FOUND", `Internal account ${id} not found`);
    return row;
  }

  async get(ctx: RequestContext, id: string): Promise<InternalAccount> {
    return toInternalAccount(await this.getRow(ctx, id));
  }

  async list(ctx: RequestContext, filter: InternalAccountFilter): Promise<Page<InternalAccount>> {
    const rows = await this.services.db.internalAccount.findMany({
      where: {
        platformId: ctx.platformId,
        ...(filter.customerId ? { customerId: filter.customerId } : {}),
        ...(filter.currency ? { currency: filter.currency } : {}),
        ...(filter.type ? { type: filter.type } : {}),
        ...afterCursor(decodeCursor(filter.cursor)),
      },
      orderBy: newestFirst,
      take: filter.limit + 1,
    });
    return toPage(rows, filter.limit, toInternalAccount);
  }

  /** Sandbox funding: a FUNDING transaction that credits the account through the ledger. */
  async fund(ctx: RequestContext, id: string, amount: number): Promise<InternalAccount> {
    const account = await this.getRow(ctx, id);
    const at = ctx.clock.now();
    const row = await this.services.db.$transaction(async (tx) => {
      const funding = await createTransaction(
        tx,
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
      await credit(tx, {
        platformId: ctx.platformId,
        accountId: id,
        amount: BigInt(amount),
        kind: "SANDBOX_FUNDING",
        reference: funding.id,
        at,
      });
      return tx.internalAccount.findUniqueOrThrow({ where: { id } });
    });
    return toInternalAccount(row);
  }
}
