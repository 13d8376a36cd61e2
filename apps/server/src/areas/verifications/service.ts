import type { Schemas } from "@payments-sandbox/client";
import { individualKycOutcome, kybOutcome } from "@payments-sandbox/sandbox-rules";
import { insert, q, run, type Row } from "../../db/query.js";
import { ApiError, fieldError, notFound } from "../../errors.js";
import { emitEvent } from "../../events/outbox.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { Query } from "../../http/operation-types.js";
import { type Page, newestCountedPage } from "../../http/pagination.js";
import { newId } from "../../ids.js";
import { emitStatusEvent, type CustomerRow, type CustomerService } from "../customers/service.js";

export type Verification = Schemas["Verification"];
export type VerificationRequest = Schemas["VerificationRequest"];
type VerificationStatus = Schemas["VerificationStatus"];
type VerificationError = Schemas["VerificationError"];
type VerificationRow = Row<"Verification">;

export type VerificationFilter = Query<"listVerifications">;

/** What an individual must have given before a reviewer can look at it. */
const INDIVIDUAL_REQUIRED_FIELDS = [
  "fullName",
  "birthDate",
  "nationality",
  "address",
  "idType",
  "identifier",
] as const;

interface Decision {
  /** Never READY_FOR_VERIFICATION: the sandbox decides at once. */
  verificationStatus: Exclude<VerificationStatus, "READY_FOR_VERIFICATION">;
  errors: VerificationError[];
  /** The customer's new KYC or KYB status, when the verification sets one. */
  customerStatus?: "PENDING" | "APPROVED" | "REJECTED";
}

export function toVerification(row: VerificationRow): Verification {
  return {
    id: row.id,
    customerId: row.customerId,
    verificationStatus: row.verificationStatus as VerificationStatus,
    errors: JSON.parse(row.errors) as VerificationError[],
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

const alreadyDecided = (customer: CustomerRow, status: string) =>
  new ApiError(
    400,
    "INVALID_INPUT",
    `Customer ${customer.id} cannot be submitted again: its verification is final (${status})`,
    { details: { errors: [fieldError("body.customerId", `status is ${status}`)] } },
  );

/** The sandbox's verification of a customer, decided by the magic values. */
function decide(customer: CustomerRow): Decision {
  const details = JSON.parse(customer.details) as Record<string, unknown>;
  if (customer.customerType === "BUSINESS") {
    if (customer.kybStatus === "APPROVED" || customer.kybStatus === "REJECTED") {
      throw alreadyDecided(customer, customer.kybStatus);
    }
    const businessInfo = (details.businessInfo ?? {}) as { registrationNumber?: string };
    const { kybStatus } = kybOutcome(businessInfo.registrationNumber).outcome;
    return {
      verificationStatus: kybStatus === "PENDING" ? "PENDING_MANUAL_REVIEW" : kybStatus,
      errors: [],
      customerStatus: kybStatus,
    };
  }
  const { outcome } = individualKycOutcome(details.fullName as string | undefined);
  if (outcome.onVerification === "REFUSE") {
    throw alreadyDecided(customer, customer.kycStatus ?? outcome.kycStatus);
  }
  if (outcome.onVerification === "POOR_QUALITY_DOCUMENT") {
    return {
      verificationStatus: "RESOLVE_ERRORS",
      errors: [
        {
          resourceId: customer.id,
          type: "POOR_QUALITY_DOCUMENT",
          acceptedDocumentTypes: ["PASSPORT", "DRIVERS_LICENSE", "NATIONAL_ID"],
          reason: "The identity document could not be read; upload a clearer copy.",
        },
      ],
    };
  }
  const missing = INDIVIDUAL_REQUIRED_FIELDS.filter((field) => details[field] === undefined);
  if (missing.length > 0) {
    return {
      verificationStatus: "RESOLVE_ERRORS",
      errors: missing.map((field) => ({
        resourceId: customer.id,
        type: "MISSING_FIELD",
        field,
        reason: `${field} is required for verification.`,
      })),
    };
  }
  return { verificationStatus: "PENDING_MANUAL_REVIEW", errors: [], customerStatus: "PENDING" };
}

/** KYC and KYB submissions; the outcome is recorded on the verification and the customer. */
export class VerificationService {
  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
  ) {}

  async create(ctx: RequestContext, input: VerificationRequest): Promise<Verification> {
    const customer = await this.customers.getActiveRow(ctx, input.customerId);
    const decision = decide(customer);
    const now = ctx.clock.now();
    const row: VerificationRow = {
      id: newId("Verification"),
      platformId: ctx.platformId,
      customerId: customer.id,
      verificationStatus: decision.verificationStatus,
      errors: JSON.stringify(decision.errors),
      createdAt: now,
      updatedAt: now,
    };
    const statusColumn = customer.customerType === "BUSINESS" ? "kybStatus" : "kycStatus";
    const changed =
      decision.customerStatus !== undefined && customer[statusColumn] !== decision.customerStatus
        ? { ...customer, [statusColumn]: decision.customerStatus, updatedAt: now }
        : undefined;
    await this.services.data.transaction(function* () {
      yield* insert("Verification", row);
      yield* emitEvent({
        platformId: ctx.platformId,
        type: `VERIFICATION.${decision.verificationStatus}`,
        objectId: row.id,
        data: toVerification(row),
        at: now,
      });
      // Only a real change is a customer event: the outcome depends only on
      // the customer's own fields, so two submissions at once agree on it.
      if (changed) {
        yield* run(
          q
            .updateTable("Customer")
            .set({ [statusColumn]: decision.customerStatus, updatedAt: now })
            .where("id", "=", customer.id)
            .where("platformId", "=", ctx.platformId),
        );
        yield* emitStatusEvent(ctx, changed);
      }
    });
    return toVerification(row);
  }

  async get(ctx: RequestContext, id: string): Promise<Verification> {
    const row = await this.services.data.one(
      q
        .selectFrom("Verification")
        .selectAll()
        .where("id", "=", id)
        .where("platformId", "=", ctx.platformId),
    );
    if (!row) throw notFound("REFERENCE_NOT_FOUND", `Verification ${id} not found`);
    return toVerification(row);
  }

  async list(
    ctx: RequestContext,
    filter: VerificationFilter,
  ): Promise<Page<Verification> & { totalCount: number }> {
    let query = q.selectFrom("Verification").where("platformId", "=", ctx.platformId);
    if (filter.customerId) query = query.where("customerId", "=", filter.customerId);
    if (filter.verificationStatus)
      query = query.where("verificationStatus", "=", filter.verificationStatus);
    return newestCountedPage(this.services.data, query, filter, toVerification);
  }
}
