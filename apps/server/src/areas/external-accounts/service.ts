import type { Schemas } from "@payments-sandbox/client";
import type { SelectQueryBuilder } from "kysely";
import { beneficiaryVerificationOutcome } from "@payments-sandbox/sandbox-rules";
import { insert, one, q, type Row } from "../../db/query.js";
import { ApiError, fieldError, invalidInput, notFound } from "../../errors.js";
import type { Query } from "../../http/operation-types.js";
import { type RequestContext, type Services, scopedTo } from "../../http/context.js";
import { type Page, newestCountedPage } from "../../http/pagination.js";
import { newId } from "../../ids.js";
import type { CustomerService } from "../customers/service.js";
import {
  answeredInfo,
  beneficiaryNameOf,
  currencyOfType,
  primaryIdentifier,
  signatureChainOf,
  type AccountInfoCreate,
} from "./account-info.js";

export type ExternalAccount = Schemas["ExternalAccount"];
export type ExternalAccountRow = Row<"ExternalAccount">;
type CustomerAccountCreate = Schemas["ExternalAccountCreateRequest"];
type PlatformAccountCreate = Schemas["PlatformExternalAccountCreateRequest"];
export type CustomerAccountFilter = Query<"listCustomerExternalAccounts">;
export type PlatformAccountFilter = Query<"listPlatformExternalAccounts">;

/** Whose external accounts an operation works on: the customers' or the platform's own. */
export type Owner = "customers" | "platform";

export function toExternalAccount(row: ExternalAccountRow): ExternalAccount {
  const status =
    row.beneficiaryVerificationStatus as ExternalAccount["beneficiaryVerificationStatus"];
  return {
    id: row.id,
    ...(row.customerId !== null ? { customerId: row.customerId } : {}),
    status: row.status as ExternalAccount["status"],
    ...(row.platformAccountId !== null ? { platformAccountId: row.platformAccountId } : {}),
    ...(row.ownershipType !== null
      ? { ownershipType: row.ownershipType as ExternalAccount["ownershipType"] }
      : {}),
    currency: row.currency,
    ...(row.customerId !== null ? { defaultUmaDepositAccount: row.defaultUmaDepositAccount } : {}),
    beneficiaryVerificationStatus: status,
    // The name the receiving institution confirmed, when it confirmed one.
    ...(status === "MATCHED" && row.beneficiaryName !== ""
      ? { beneficiaryVerifiedData: { fullName: row.beneficiaryName } }
      : {}),
    accountInfo: answeredInfo(JSON.parse(row.accountInfo) as AccountInfoCreate),
  };
}

/** Narrows a statement to one owner's live (not deleted) accounts. */
function ownedBy(owner: Owner) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return <QB extends SelectQueryBuilder<any, any, any>>(qb: QB): QB =>
    qb
      .where("customerId", owner === "platform" ? "is" : "is not", null)
      .where("deletedAt", "is", null) as QB;
}

export class ExternalAccountService {
  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
  ) {}

  async create(
    ctx: RequestContext,
    owner: Owner,
    input: CustomerAccountCreate | PlatformAccountCreate,
  ): Promise<ExternalAccount> {
    let customerId: string | null = null;
    if (owner === "customers") {
      const requested = (input as CustomerAccountCreate).customerId;
      if (!requested) {
        throw invalidInput("customerId is required for a customer's external account", {
          errors: [fieldError("body.customerId", "required")],
        });
      }
      customerId = (await this.customers.referencedIn(ctx, "body.customerId", requested)).id;
    }
    const info = input.accountInfo;
    const denomination = currencyOfType(info.accountType);
    if (denomination !== undefined && denomination !== input.currency) {
      throw new ApiError(
        400,
        "INVALID_CURRENCY",
        `A ${info.accountType} holds ${denomination}, not ${input.currency}`,
        { details: { errors: [fieldError("body.currency", `must be ${denomination}`)] } },
      );
    }
    const identifier = primaryIdentifier(info);
    // The beneficiary name check of the receiving institution (sandbox: suffix 1xx).
    const verification = beneficiaryVerificationOutcome(identifier).outcome;
    if (verification.kind === "REJECT") {
      throw new ApiError(verification.status, verification.errorCode, verification.message);
    }
    await this.refuseDuplicate(ctx, owner, customerId, info.accountType, identifier, input);

    const ownershipType = input.ownershipType ?? null;
    const now = ctx.clock.now();
    const row: ExternalAccountRow = {
      id: newId("ExternalAccount"),
      platformId: ctx.platformId,
      customerId,
      currency: input.currency,
      accountType: info.accountType,
      accountInfo: JSON.stringify(info),
      identifier,
      beneficiaryName: beneficiaryNameOf(info),
      beneficiaryVerificationStatus: verification.beneficiaryVerificationStatus,
      // The customer's own self-custody wallet must prove it is theirs.
      status:
        ownershipType === "FIRST_PARTY" && signatureChainOf(info.accountType)
          ? "PENDING_OWNERSHIP_VERIFICATION"
          : "ACTIVE",
      ownershipType,
      platformAccountId: input.platformAccountId ?? null,
      defaultUmaDepositAccount:
        owner === "customers"
          ? ((input as CustomerAccountCreate).defaultUmaDepositAccount ?? false)
          : false,
      ownershipChallenge: null,
      scaTrustedAt: null,
      deletedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.services.data.transaction(() => insert("ExternalAccount", row));
    return toExternalAccount(row);
  }

  /** The same account, or the same platformAccountId, registered twice for one owner is a conflict. */
  private async refuseDuplicate(
    ctx: RequestContext,
    owner: Owner,
    customerId: string | null,
    accountType: string,
    identifier: string,
    input: { currency: string; platformAccountId?: string },
  ): Promise<void> {
    const mine = q
      .selectFrom("ExternalAccount")
      .select("id")
      .where("platformId", "=", ctx.platformId)
      .$call(ownedBy(owner));
    const sameOwner = customerId === null ? mine : mine.where("customerId", "=", customerId);
    const twin = await this.services.data.one(
      sameOwner
        .where("accountType", "=", accountType)
        .where("identifier", "=", identifier)
        .where("currency", "=", input.currency),
    );
    if (twin) {
      throw new ApiError(409, "CONFLICT", `This account is already registered as ${twin.id}`, {
        details: { externalAccountId: twin.id },
      });
    }
    if (input.platformAccountId !== undefined) {
      const taken = await this.services.data.one(
        mine.where("platformAccountId", "=", input.platformAccountId),
      );
      if (taken) {
        throw new ApiError(
          409,
          "CONFLICT",
          `platformAccountId ${input.platformAccountId} is already used by ${taken.id}`,
          { details: { externalAccountId: taken.id } },
        );
      }
    }
  }

  /**
   * Any live external account of this platform (and of the agent's customer
   * when an agent asks): what transfers and quotes pay to or from.
   */
  async getRow(ctx: RequestContext, id: string): Promise<ExternalAccountRow> {
    const row = await this.services.data.one(
      q
        .selectFrom("ExternalAccount")
        .selectAll()
        .where("id", "=", id)
        .where("deletedAt", "is", null)
        .$call(scopedTo(ctx)),
    );
    if (!row) throw notFound("REFERENCE_NOT_FOUND", `External account ${id} not found`);
    return row;
  }

  /** One of the owner's live accounts (of the agent's customer when an agent asks). */
  async ownedRow(ctx: RequestContext, owner: Owner, id: string): Promise<ExternalAccountRow> {
    const row = await this.services.data.one(
      q
        .selectFrom("ExternalAccount")
        .selectAll()
        .where("id", "=", id)
        .$call(scopedTo(ctx))
        .$call(ownedBy(owner)),
    );
    if (!row) throw notFound("REFERENCE_NOT_FOUND", `External account ${id} not found`);
    return row;
  }

  async get(ctx: RequestContext, owner: Owner, id: string): Promise<ExternalAccount> {
    return toExternalAccount(await this.ownedRow(ctx, owner, id));
  }

  async list(
    ctx: RequestContext,
    owner: Owner,
    filter: CustomerAccountFilter | PlatformAccountFilter,
  ): Promise<Page<ExternalAccount> & { totalCount: number }> {
    let query = q
      .selectFrom("ExternalAccount")
      .where("platformId", "=", ctx.platformId)
      .$call(ownedBy(owner));
    const customerId = (filter as CustomerAccountFilter).customerId;
    if (owner === "customers" && customerId) query = query.where("customerId", "=", customerId);
    if (filter.currency) query = query.where("currency", "=", filter.currency);
    return newestCountedPage(this.services.data, query, filter, toExternalAccount);
  }

  /**
   * Retires the account: no new money moves to or from it; its transactions
   * keep the id. A trusted beneficiary (areas/sca) is refused (409
   * `BENEFICIARY_TRUSTED`, as production's platform operation declares) unless
   * `trusted` is "UNTRUST": then its trust goes with it, in the same write.
   * Untrusting sends no webhook, so neither does this.
   */
  async delete(
    ctx: RequestContext,
    owner: Owner,
    id: string,
    trusted: "REFUSE" | "UNTRUST" = "REFUSE",
  ): Promise<void> {
    const row = await this.ownedRow(ctx, owner, id);
    const refuseTrusted = trusted === "REFUSE";
    const trustedError = () =>
      new ApiError(
        409,
        "BENEFICIARY_TRUSTED",
        `External account ${row.id} is a trusted beneficiary; untrust it with POST /customers/external-accounts/${row.id}/untrust before deleting it`,
      );
    if (refuseTrusted && row.scaTrustedAt !== null) throw trustedError();
    const now = ctx.clock.now();
    const deleted = await this.services.data.transaction(() =>
      one(
        q
          .updateTable("ExternalAccount")
          .set({ deletedAt: now, updatedAt: now, ownershipChallenge: null, scaTrustedAt: null })
          .where("id", "=", row.id)
          .where("platformId", "=", ctx.platformId)
          .where("deletedAt", "is", null)
          .$if(refuseTrusted, (qb) => qb.where("scaTrustedAt", "is", null))
          .returning("id"),
      ),
    );
    if (!deleted) {
      const again = await this.ownedRow(ctx, owner, id);
      if (refuseTrusted && again.scaTrustedAt !== null) throw trustedError();
      throw notFound("REFERENCE_NOT_FOUND", `External account ${id} not found`);
    }
  }
}
