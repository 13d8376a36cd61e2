import type { Schemas } from "@sandbox/client";
import { beneficiaryVerificationOutcome, parseUmaAddress } from "@sandbox/sandbox-rules";
import type { ExternalAccount as ExternalAccountRow } from "../../db/generated/sqlite/client.js";
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
import type { CustomerService } from "../customers/service.js";

export type ExternalAccount = Schemas["ExternalAccount"];
export type ExternalAccountCreate = Schemas["ExternalAccountCreate"];
export type { ExternalAccountRow };

/** The query of listExternalAccounts, as validated. */
export type ExternalAccountFilter = Query<"listExternalAccounts">;

/**
 * The account's primary identifier: what the receiving institution knows it
 * by, and what the sandbox magic suffixes are read from.
 */
export function primaryIdentifier(input: ExternalAccountCreate): string {
  switch (input.accountType) {
    case "US_ACCOUNT":
      return input.accountInfo.accountNumber;
    case "IBAN":
      return input.accountInfo.iban;
    case "CLABE":
      return input.accountInfo.clabe;
    case "SPARK_WALLET":
    case "LIGHTNING":
    case "UMA":
    case "SOLANA_WALLET":
      return input.accountInfo.address;
  }
}

export function toExternalAccount(row: ExternalAccountRow): ExternalAccount {
  return {
    id: row.id,
    customerId: row.customerId,
    currency: row.currency,
    accountType: row.accountType,
    accountInfo: JSON.parse(row.accountInfo),
    beneficiaryName: row.beneficiaryName,
    beneficiaryVerificationStatus:
      row.beneficiaryVerificationStatus as ExternalAccount["beneficiaryVerificationStatus"],
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  } as ExternalAccount;
}

export class ExternalAccountService {
  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
  ) {}

  async create(ctx: RequestContext, input: ExternalAccountCreate): Promise<ExternalAccount> {
    const customer = await this.customers.getRow(ctx, input.customerId);
    const identifier = primaryIdentifier(input);
    if (input.accountType === "UMA") {
      const parsed = parseUmaAddress(identifier);
      if (!parsed.ok) {
        throw new ApiError(400, "INVALID_UMA_ADDRESS", `Invalid UMA address: ${parsed.problem}.`, {
          details: { field: "accountInfo.address" },
        });
      }
    }
    // The beneficiary name check of the receiving institution (sandbox: suffix 1xx).
    const verification = beneficiaryVerificationOutcome(identifier).outcome;
    if (verification.kind === "REJECT") {
      throw new ApiError(verification.status, verification.errorCode, verification.message);
    }
    const now = ctx.clock.now();
    const row = await this.services.db.externalAccount.create({
      data: {
        id: newId("ExternalAccount"),
        platformId: ctx.platformId,
        customerId: customer.id,
        currency: input.currency,
        accountType: input.accountType,
        accountInfo: JSON.stringify(input.accountInfo),
        identifier,
        beneficiaryName: input.beneficiaryName,
        beneficiaryVerificationStatus: verification.beneficiaryVerificationStatus,
        createdAt: now,
        updatedAt: now,
      },
    });
    return toExternalAccount(row);
  }

  /** An external account of this platform (and of the agent's customer when an agent asks). */
  async getRow(ctx: RequestContext, id: string): Promise<ExternalAccountRow> {
    const row = await this.services.db.externalAccount.findFirst({
      where: { id, ...visibleTo(ctx) },
    });
    if (!row) throw notFound("ACCOUNT_NOT_FOUND", `External account ${id} not found`);
    return row;
  }

  async get(ctx: RequestContext, id: string): Promise<ExternalAccount> {
    return toExternalAccount(await this.getRow(ctx, id));
  }

  async list(ctx: RequestContext, filter: ExternalAccountFilter): Promise<Page<ExternalAccount>> {
    const rows = await this.services.db.externalAccount.findMany({
      where: {
        platformId: ctx.platformId,
        ...(filter.customerId ? { customerId: filter.customerId } : {}),
        ...afterCursor(decodeCursor(filter.cursor)),
      },
      orderBy: newestFirst,
      take: filter.limit + 1,
    });
    return toPage(rows, filter.limit, toExternalAccount);
  }
}
