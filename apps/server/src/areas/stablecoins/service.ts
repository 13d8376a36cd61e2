import type { Schemas } from "@payments-sandbox/client";
import { isUniqueViolation } from "../../db/errors.js";
import { insert, q } from "../../db/query.js";
import { ApiError, fieldError, invalidInput, notFound } from "../../errors.js";
import type { Query } from "../../http/operation-types.js";
import type { RequestContext, Services } from "../../http/context.js";
import { type Page, newestCountedPage } from "../../http/pagination.js";
import { newId } from "../../ids.js";
import { accountTypeFor, newAccountRows } from "../internal-accounts/opening.js";
import { SUPPORTED_CURRENCIES } from "../quotes/exchange-rates.js";
import type { StablecoinProviderAccountService } from "./provider-accounts.js";
import { toStablecoin, type Stablecoin, type StablecoinRow } from "./view.js";

// Provider-created stablecoins registered by a platform (/stablecoins).
// Registration links a token that exists at the provider; the sandbox's
// provider knows every token it is asked about: a dollar token of 6
// decimals, provisioned and enabled for operations at once. Its balance in
// the sandbox is held by a platform internal account in the token's
// currency (its providerTokenIdentifier), opened with it, which mints can
// credit and burns debit through the ledger.

export type RegisterRequest = Schemas["StablecoinRegisterRequest"];
export type StablecoinFilter = Query<"listStablecoins">;

/** What the sandbox's provider reports for every token. */
export const SANDBOX_TOKEN = { baseCurrency: "USD", decimals: 6 } as const;

/** A currency code the sandbox already gives another meaning. */
function isTakenCurrency(code: string): boolean {
  return SUPPORTED_CURRENCIES.includes(code) || accountTypeFor(code) !== "INTERNAL_FIAT";
}

export class StablecoinService {
  constructor(
    private readonly services: Services,
    private readonly providerAccounts: StablecoinProviderAccountService,
  ) {}

  async register(ctx: RequestContext, input: RegisterRequest): Promise<Stablecoin> {
    const token = input.providerTokenIdentifier;
    if (token.trim() !== token || isTakenCurrency(token)) {
      throw invalidInput(
        `providerTokenIdentifier ${JSON.stringify(token)} cannot name a stablecoin: it has surrounding spaces or is a currency the sandbox already holds`,
        { errors: [fieldError("body.providerTokenIdentifier", "not usable as a currency code")] },
      );
    }
    const link = await this.providerAccounts.usable(ctx, input.stablecoinProviderAccountId);
    const now = ctx.clock.now();
    const row: StablecoinRow = {
      id: newId("Stablecoin"),
      platformId: ctx.platformId,
      name: `Sandbox Dollar ${token}`,
      symbol: token,
      baseCurrency: SANDBOX_TOKEN.baseCurrency,
      network: input.network,
      decimals: SANDBOX_TOKEN.decimals,
      issuanceStatus: "PROVISIONED",
      gridOperationsStatus: "ENABLED",
      networkTokenIdentifier: input.networkTokenIdentifier,
      currency: token,
      provider: link.provider,
      stablecoinProviderAccountId: link.id,
      providerEnvironment: link.providerEnvironment,
      providerTokenIdentifier: token,
      createdAt: now,
      updatedAt: now,
    };
    const owner = { platformId: ctx.platformId, customerId: null };
    const held = await this.services.data.all(
      q
        .selectFrom("InternalAccount")
        .select("currency")
        .where("platformId", "=", ctx.platformId)
        .where("customerId", "is", null)
        .where("currency", "=", token),
    );
    const accounts = newAccountRows(owner, [token], now, new Set(held.map((a) => a.currency)));
    try {
      await this.services.data.transaction(function* () {
        yield* insert("Stablecoin", row);
        for (const account of accounts) {
          yield* insert("InternalAccount", { ...account, type: "INTERNAL_CRYPTO" });
        }
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      throw new ApiError(
        409,
        "CONFLICT",
        `A stablecoin with providerTokenIdentifier ${token} is already registered`,
      );
    }
    return toStablecoin(row);
  }

  async list(
    ctx: RequestContext,
    filter: StablecoinFilter,
  ): Promise<Page<Stablecoin> & { totalCount: number }> {
    let query = q.selectFrom("Stablecoin").where("platformId", "=", ctx.platformId);
    if (filter.issuanceStatus) query = query.where("issuanceStatus", "=", filter.issuanceStatus);
    if (filter.gridOperationsStatus) {
      query = query.where("gridOperationsStatus", "=", filter.gridOperationsStatus);
    }
    if (filter.provider) query = query.where("provider", "=", filter.provider);
    return newestCountedPage(this.services.data, query, filter, toStablecoin);
  }

  async get(ctx: RequestContext, id: string): Promise<Stablecoin> {
    return toStablecoin(await this.getRow(ctx, id));
  }

  async getRow(ctx: RequestContext, id: string): Promise<StablecoinRow> {
    const row = await this.services.data.one(
      q
        .selectFrom("Stablecoin")
        .selectAll()
        .where("id", "=", id)
        .where("platformId", "=", ctx.platformId),
    );
    if (!row) throw notFound("REFERENCE_NOT_FOUND", `Stablecoin ${id} not found`);
    return row;
  }
}
