import type { Schemas } from "@payments-sandbox/client";
import { stablecoinProviderAccountOutcome } from "@payments-sandbox/sandbox-rules";
import { sha256Hex } from "../../crypto/sha256.js";
import { isUniqueViolation } from "../../db/errors.js";
import { insert, q } from "../../db/query.js";
import { ApiError, notFound } from "../../errors.js";
import type { Query } from "../../http/operation-types.js";
import type { RequestContext, Services } from "../../http/context.js";
import { type Page, newestCountedPage } from "../../http/pagination.js";
import { newId } from "../../ids.js";
import {
  toProviderAccount,
  type ProviderAccountRow,
  type StablecoinProviderAccount,
} from "./view.js";

// Links to a platform's account at a stablecoin provider
// (/stablecoin-provider-accounts). The sandbox's provider checks nothing
// real: the stablecoin provider account table (packages/sandbox-rules)
// decides the status it reports, by the end of `apiClientId`. A link that is
// not ACTIVE is kept, and refused when something is registered through it.

export type LinkRequest = Schemas["StablecoinProviderAccountLinkRequest"];
export type ProviderAccountFilter = Query<"listStablecoinProviderAccounts">;

/** The platform mode decides the provider environment; the sandbox is always SANDBOX. */
export const PROVIDER_ENVIRONMENT = "SANDBOX";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A 27-character provider account id derived from the client id, stable across calls. */
function derivedProviderAccountId(apiClientId: string): string {
  let n = BigInt(`0x${sha256Hex(`account:${apiClientId}`)}`);
  let id = "";
  while (id.length < 27) {
    id += BASE62[Number(n % 62n)];
    n /= 62n;
  }
  return id;
}

function providerAccountNotFound(id: string): ApiError {
  return notFound(
    "STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND",
    `Stablecoin provider account ${id} not found`,
  );
}

/** The refusal of a link that cannot be used, or undefined for an ACTIVE one. */
function unusable(row: ProviderAccountRow): ApiError | undefined {
  const details = { stablecoinProviderAccountId: row.id, status: row.status };
  if (row.status === "INVALID") {
    return new ApiError(
      400,
      "STABLECOIN_PROVIDER_ACCOUNT_INVALID",
      `The credentials of stablecoin provider account ${row.id} do not verify; link them again`,
      { details },
    );
  }
  if (row.status === "REVOKED") {
    return new ApiError(
      400,
      "STABLECOIN_PROVIDER_ACCOUNT_REVOKED",
      `The provider has revoked the credentials of stablecoin provider account ${row.id}`,
      { details },
    );
  }
  return undefined;
}

export class StablecoinProviderAccountService {
  constructor(private readonly services: Services) {}

  async link(ctx: RequestContext, input: LinkRequest): Promise<StablecoinProviderAccount> {
    const { status } = stablecoinProviderAccountOutcome(input.apiClientId).outcome;
    const now = ctx.clock.now();
    const row: ProviderAccountRow = {
      id: newId("StablecoinProviderAccount"),
      platformId: ctx.platformId,
      provider: input.provider,
      providerAccountId: input.providerAccountId ?? derivedProviderAccountId(input.apiClientId),
      providerEnvironment: PROVIDER_ENVIRONMENT,
      status,
      apiClientId: input.apiClientId,
      apiClientSecretSha256: sha256Hex(input.apiClientSecret),
      lastVerifiedAt: status === "ACTIVE" ? now : null,
      createdAt: now,
      updatedAt: now,
    };
    try {
      await this.services.data.transaction(() => insert("StablecoinProviderAccount", row));
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const existing = await this.services.data.one(
        q
          .selectFrom("StablecoinProviderAccount")
          .select("id")
          .where("platformId", "=", ctx.platformId)
          .where("provider", "=", row.provider)
          .where("providerAccountId", "=", row.providerAccountId),
      );
      throw new ApiError(
        409,
        "CONFLICT",
        `Provider account ${row.providerAccountId} is already linked`,
        existing ? { details: { stablecoinProviderAccountId: existing.id } } : {},
      );
    }
    return toProviderAccount(row);
  }

  async list(
    ctx: RequestContext,
    filter: ProviderAccountFilter,
  ): Promise<Page<StablecoinProviderAccount> & { totalCount: number }> {
    let query = q.selectFrom("StablecoinProviderAccount").where("platformId", "=", ctx.platformId);
    if (filter.provider) query = query.where("provider", "=", filter.provider);
    if (filter.status) query = query.where("status", "=", filter.status);
    return newestCountedPage(this.services.data, query, filter, toProviderAccount);
  }

  async get(ctx: RequestContext, id: string): Promise<StablecoinProviderAccount> {
    return toProviderAccount(await this.getRow(ctx, id));
  }

  async getRow(ctx: RequestContext, id: string): Promise<ProviderAccountRow> {
    const row = await this.services.data.one(
      q
        .selectFrom("StablecoinProviderAccount")
        .selectAll()
        .where("id", "=", id)
        .where("platformId", "=", ctx.platformId),
    );
    if (!row) throw providerAccountNotFound(id);
    return row;
  }

  /**
   * The link something is registered through: the one named (404 when the
   * platform has none such, 400 when it is not ACTIVE), or else the
   * platform's one ACTIVE link. Several ACTIVE links need a choice (400
   * SELECTION_REQUIRED); none is 404, or the refusal of the newest link when
   * the platform has only unusable ones.
   */
  async usable(ctx: RequestContext, id: string | undefined): Promise<ProviderAccountRow> {
    if (id !== undefined) {
      const row = await this.getRow(ctx, id);
      const refusal = unusable(row);
      if (refusal) throw refusal;
      return row;
    }
    const active = await this.services.data.all(
      q
        .selectFrom("StablecoinProviderAccount")
        .selectAll()
        .where("platformId", "=", ctx.platformId)
        .where("status", "=", "ACTIVE")
        .orderBy("createdAt", "desc")
        .orderBy("id", "desc")
        .limit(2),
    );
    const [only, another] = active;
    if (only && !another) return only;
    if (only && another) {
      throw new ApiError(
        400,
        "STABLECOIN_PROVIDER_ACCOUNT_SELECTION_REQUIRED",
        "The platform has several active stablecoin provider accounts; pass stablecoinProviderAccountId to choose one",
      );
    }
    const newest = await this.services.data.one(
      q
        .selectFrom("StablecoinProviderAccount")
        .selectAll()
        .where("platformId", "=", ctx.platformId)
        .orderBy("createdAt", "desc")
        .orderBy("id", "desc")
        .limit(1),
    );
    const refusal = newest && unusable(newest);
    if (refusal) throw refusal;
    throw notFound(
      "STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND",
      "The platform has no stablecoin provider account; link one with POST /stablecoin-provider-accounts",
    );
  }
}
