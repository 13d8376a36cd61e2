import type { Schemas } from "@sandbox/client";
import { beneficiaryVerificationOutcome, parseUmaAddress } from "@sandbox/sandbox-rules";
import { insert, q, type Row } from "../../db/query.js";
import { ApiError, notFound } from "../../errors.js";
import type { Query } from "../../http/operation-types.js";
import { type RequestContext, type Services, scopedTo } from "../../http/context.js";
import { decodeCursor, newestPage, toPage, type Page } from "../../http/pagination.js";
import { newId } from "../../ids.js";
import type { CustomerService } from "../customers/service.js";

export type ExternalAccount = Schemas["ExternalAccount"];
export type ExternalAccountCreate = Schemas["ExternalAccountCreate"];
export type ExternalAccountRow = Row<"ExternalAccount">;

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
    const customer = await this.customers.getActiveRow(ctx, input.customerId);
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
    const row: ExternalAccountRow = {
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
    };
    await this.services.data.transaction(() => insert("ExternalAccount", row));
    return toExternalAccount(row);
  }

  /** An external account of this platform (and of the agent's customer when an agent asks). */
  async getRow(ctx: RequestContext, id: string): Promise<ExternalAccountRow> {
    const row = await this.services.data.one(
      q.selectFrom("ExternalAccount").selectAll().where("id", "=", id).$call(scopedTo(ctx)),
    );
    if (!row) throw notFound("REFERENCE_NOT_FOUND", `External account ${id} not found`);
    return row;
  }

  async get(ctx: RequestContext, id: string): Promise<ExternalAccount> {
    return toExternalAccount(await this.getRow(ctx, id));
  }

  async list(ctx: RequestContext, filter: ExternalAccountFilter): Promise<Page<ExternalAccount>> {
    let query = q
      .selectFrom("ExternalAccount")
      .selectAll()
      .where("platformId", "=", ctx.platformId);
    if (filter.customerId) query = query.where("customerId", "=", filter.customerId);
    const rows = await this.services.data.all(
      query.$call(newestPage(decodeCursor(filter.cursor), filter.limit)),
    );
    return toPage(rows, filter.limit, toExternalAccount);
  }
}
