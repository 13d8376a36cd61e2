import type { Schemas } from "@payments-sandbox/client";
import { kycOutcome } from "@payments-sandbox/sandbox-rules";
import { found, insert, q, type Row } from "../../db/query.js";
import { fieldError, invalidInput, notFound } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { Query } from "../../http/operation-types.js";
import { type Page, newestCountedPage } from "../../http/pagination.js";
import { newId } from "../../ids.js";
import type { CustomerService } from "../customers/service.js";

export type BeneficialOwner = Schemas["BeneficialOwner"];
export type BeneficialOwnerCreate = Schemas["BeneficialOwnerCreateRequest"];
export type BeneficialOwnerUpdate = Schemas["BeneficialOwnerUpdateRequest"];
type PersonalInfo = Schemas["BeneficialOwnerPersonalInfo"];
type OwnerRow = Row<"BeneficialOwner">;

export type BeneficialOwnerFilter = Query<"listBeneficialOwners">;

export function toBeneficialOwner(row: OwnerRow): BeneficialOwner {
  return {
    id: row.id,
    customerId: row.customerId,
    roles: JSON.parse(row.roles) as BeneficialOwner["roles"],
    ownershipPercentage: row.ownershipPercentage,
    personalInfo: JSON.parse(row.personalInfo) as PersonalInfo,
    kycStatus: row.kycStatus as BeneficialOwner["kycStatus"],
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The sandbox KYC of a beneficial owner: the suffix of the last name decides, at once. */
const ownerKycStatus = (info: PersonalInfo) => kycOutcome(info.lastName).outcome.kycStatus;

export class BeneficialOwnerService {
  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
  ) {}

  async create(ctx: RequestContext, input: BeneficialOwnerCreate): Promise<BeneficialOwner> {
    const customer = await this.customers.getActiveRow(ctx, input.customerId);
    if (customer.customerType !== "BUSINESS") {
      throw invalidInput("Only BUSINESS customers have beneficial owners", {
        errors: [fieldError("body.customerId", "not a business customer")],
      });
    }
    const now = ctx.clock.now();
    const row: OwnerRow = {
      id: newId("BeneficialOwner"),
      platformId: ctx.platformId,
      customerId: customer.id,
      roles: JSON.stringify(input.roles),
      ownershipPercentage: input.ownershipPercentage,
      personalInfo: JSON.stringify(input.personalInfo),
      kycStatus: ownerKycStatus(input.personalInfo),
      createdAt: now,
      updatedAt: now,
    };
    await this.services.data.transaction(() => insert("BeneficialOwner", row));
    return toBeneficialOwner(row);
  }

  private async getRow(ctx: RequestContext, id: string): Promise<OwnerRow> {
    const row = await this.services.data.one(
      q
        .selectFrom("BeneficialOwner")
        .selectAll()
        .where("id", "=", id)
        .where("platformId", "=", ctx.platformId),
    );
    if (!row) throw notFound("REFERENCE_NOT_FOUND", `Beneficial owner ${id} not found`);
    return row;
  }

  async get(ctx: RequestContext, id: string): Promise<BeneficialOwner> {
    return toBeneficialOwner(await this.getRow(ctx, id));
  }

  async list(
    ctx: RequestContext,
    filter: BeneficialOwnerFilter,
  ): Promise<Page<BeneficialOwner> & { totalCount: number }> {
    const query = q
      .selectFrom("BeneficialOwner")
      .where("platformId", "=", ctx.platformId)
      .where("customerId", "=", filter.customerId);
    return newestCountedPage(this.services.data, query, filter, toBeneficialOwner);
  }

  async update(
    ctx: RequestContext,
    id: string,
    input: BeneficialOwnerUpdate,
  ): Promise<BeneficialOwner> {
    const current = await this.getRow(ctx, id);
    const personalInfo: PersonalInfo = {
      ...(JSON.parse(current.personalInfo) as PersonalInfo),
      ...input.personalInfo,
    };
    const row: OwnerRow = {
      ...current,
      ...(input.roles !== undefined ? { roles: JSON.stringify(input.roles) } : {}),
      ...(input.ownershipPercentage !== undefined
        ? { ownershipPercentage: input.ownershipPercentage }
        : {}),
      personalInfo: JSON.stringify(personalInfo),
      kycStatus: ownerKycStatus(personalInfo),
      updatedAt: ctx.clock.now(),
    };
    await this.services.data.transaction(() =>
      found(
        q
          .updateTable("BeneficialOwner")
          .set({
            roles: row.roles,
            ownershipPercentage: row.ownershipPercentage,
            personalInfo: row.personalInfo,
            kycStatus: row.kycStatus,
            updatedAt: row.updatedAt,
          })
          .where("id", "=", id)
          .where("platformId", "=", ctx.platformId)
          .returning("id"),
        `beneficial owner ${id}`,
      ),
    );
    return toBeneficialOwner(row);
  }
}
