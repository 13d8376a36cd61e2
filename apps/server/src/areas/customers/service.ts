import type { Schemas } from "@sandbox/client";
import { kycOutcome } from "@sandbox/sandbox-rules";
import { insertAll, prepared, q, rowOf, type Row } from "../../db/query.js";
import { ApiError, notFound } from "../../errors.js";
import type { Query } from "../../http/operation-types.js";
import type { RequestContext, Services } from "../../http/context.js";
import { decodeCursor, newestPage, toPage, type Page } from "../../http/pagination.js";
import { newId } from "../../ids.js";
import { isUniqueViolation } from "../../db/errors.js";
import { notifyEventEmitted, outboxRow } from "../../events/outbox.js";

export type Customer = Schemas["Customer"];
export type CustomerCreate = Schemas["CustomerCreate"];
type KycStatus = Schemas["KycStatus"];
type CustomerRow = Row<"Customer">;

/** The query of listCustomers, as validated. */
export type CustomerFilter = Query<"listCustomers">;

export function toCustomer(row: CustomerRow): Customer {
  const common = {
    id: row.id,
    kycStatus: row.kycStatus as KycStatus,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    ...(row.platformCustomerId !== null ? { platformCustomerId: row.platformCustomerId } : {}),
  };
  if (row.customerType === "BUSINESS") {
    return {
      ...common,
      customerType: "BUSINESS",
      businessInfo: JSON.parse(row.businessInfo ?? "{}"),
      ...(row.beneficialOwners ? { beneficialOwners: JSON.parse(row.beneficialOwners) } : {}),
      ...(row.kybStatus ? { kybStatus: row.kybStatus as Schemas["KybStatus"] } : {}),
    } as Customer;
  }
  return {
    ...common,
    customerType: "INDIVIDUAL",
    personalInfo: JSON.parse(row.personalInfo ?? "{}"),
  } as Customer;
}

/** The sandbox KYC decision: the beneficial owner's last name suffix. */
function initialKycStatus(input: CustomerCreate): KycStatus {
  if (input.customerType === "INDIVIDUAL")
    return kycOutcome(input.personalInfo.lastName).outcome.kycStatus;
  const owner = input.beneficialOwners?.[0];
  // A business with no beneficial owner declared cannot be KYC approved yet.
  return owner ? kycOutcome(owner.personalInfo.lastName).outcome.kycStatus : "PENDING";
}

const customerRow = prepared((args: { id: string; platformId: string }) =>
  q
    .selectFrom("Customer")
    .selectAll()
    .where("id", "=", args.id)
    .where("platformId", "=", args.platformId),
);

export class CustomerService {
  constructor(private readonly services: Services) {}

  async create(ctx: RequestContext, input: CustomerCreate): Promise<Customer> {
    const now = ctx.clock.now();
    try {
      // KYC runs at creation, so the status is set here: that is the first
      // CUSTOMER.KYC_STATUS_CHANGE, written with the customer.
      const row: CustomerRow = {
        id: newId("Customer"),
        platformId: ctx.platformId,
        customerType: input.customerType,
        platformCustomerId: input.platformCustomerId ?? null,
        personalInfo:
          input.customerType === "INDIVIDUAL" ? JSON.stringify(input.personalInfo) : null,
        businessInfo: input.customerType === "BUSINESS" ? JSON.stringify(input.businessInfo) : null,
        beneficialOwners:
          input.customerType === "BUSINESS" && input.beneficialOwners
            ? JSON.stringify(input.beneficialOwners)
            : null,
        kycStatus: initialKycStatus(input),
        kybStatus: null,
        createdAt: now,
        updatedAt: now,
      };
      const event = outboxRow({
        platformId: ctx.platformId,
        type: "CUSTOMER.KYC_STATUS_CHANGE",
        objectId: row.id,
        data: toCustomer(row),
        at: now,
      });
      // Two rows that do not read each other: one statement, and on
      // PostgreSQL one round trip instead of BEGIN, two inserts and COMMIT.
      await this.services.data.transaction(
        () => insertAll([rowOf("Customer", row), rowOf("WebhookEvent", event)]),
        "eachStep",
      );
      notifyEventEmitted();
      return toCustomer(row);
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw new ApiError(
          409,
          "CONFLICT",
          `A customer with platformCustomerId ${input.platformCustomerId} already exists`,
        );
      }
      throw err;
    }
  }

  async getRow(ctx: RequestContext, id: string): Promise<CustomerRow> {
    const row = await this.services.data.one(customerRow({ id, platformId: ctx.platformId }));
    if (!row) throw notFound("USER_NOT_FOUND", `Customer ${id} not found`);
    return row;
  }

  async get(ctx: RequestContext, id: string): Promise<Customer> {
    return toCustomer(await this.getRow(ctx, id));
  }

  async list(ctx: RequestContext, filter: CustomerFilter): Promise<Page<Customer>> {
    let query = q.selectFrom("Customer").selectAll().where("platformId", "=", ctx.platformId);
    if (filter.customerType) query = query.where("customerType", "=", filter.customerType);
    if (filter.kycStatus) query = query.where("kycStatus", "=", filter.kycStatus);
    if (filter.platformCustomerId)
      query = query.where("platformCustomerId", "=", filter.platformCustomerId);
    const rows = await this.services.data.all(
      query.$call(newestPage(decodeCursor(filter.cursor), filter.limit)),
    );
    return toPage(rows, filter.limit, toCustomer);
  }
}
