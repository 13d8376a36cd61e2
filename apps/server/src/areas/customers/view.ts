import type { Schemas } from "@payments-sandbox/client";
import type { Row } from "../../db/query.js";
import { contactVerificationOf } from "./contact-channels.js";

export type Customer = Schemas["CustomerOneOf"];
export type CustomerRow = Row<"Customer">;
type KycStatus = Schemas["KycStatus"];
type KybStatus = Schemas["KybStatus"];

/**
 * Fields every customer has, each a column; the rest of a request body is the
 * type's own fields (checked by the contract, which allows no others), kept
 * whole in `details`. Statuses sent by the caller are ignored: KYC and KYB
 * decide them.
 */
const COMMON_FIELDS = new Set([
  "platformCustomerId",
  "customerType",
  "region",
  "currencies",
  "email",
  "phoneNumber",
  "umaAddress",
  "endUserTermsConsent",
  "kycStatus",
  "kybStatus",
]);

/** Never returned (writeOnly in the contract). */
const WRITE_ONLY_DETAILS = new Set(["identifier"]);

export type Details = Record<string, unknown>;

/** What of a request body is kept in `details`: the fields of the customer's type. */
export function detailsOf(input: Record<string, unknown>): Details {
  return Object.fromEntries(Object.entries(input).filter(([key]) => !COMMON_FIELDS.has(key)));
}

/** The customer's currency codes (stored as a JSON array). */
export function currenciesOf(row: Pick<CustomerRow, "currencies">): string[] {
  return JSON.parse(row.currencies) as string[];
}

export function toCustomer(row: CustomerRow): Customer {
  // Built field by field: this runs for every row of every customer list.
  const customer: Record<string, unknown> = {
    id: row.id,
    platformCustomerId: row.platformCustomerId,
  };
  if (row.region !== null) customer.region = row.region;
  customer.currencies = currenciesOf(row);
  if (row.email !== null) customer.email = row.email;
  if (row.phoneNumber !== null) customer.phoneNumber = row.phoneNumber;
  customer.umaAddress = row.umaAddress;
  if (row.endUserTermsConsent !== null) {
    customer.endUserTermsConsent = JSON.parse(
      row.endUserTermsConsent,
    ) as Schemas["EndUserTermsConsent"];
  }
  customer.createdAt = row.createdAt.toISOString();
  customer.updatedAt = row.updatedAt.toISOString();
  customer.isDeleted = row.deletedAt !== null;
  const contactVerification = contactVerificationOf(row);
  if (contactVerification) customer.contactVerification = contactVerification;
  const details = JSON.parse(row.details) as Details;
  for (const key in details) {
    if (!WRITE_ONLY_DETAILS.has(key)) customer[key] = details[key];
  }
  if (row.customerType === "BUSINESS") {
    customer.customerType = "BUSINESS";
    if (row.kybStatus !== null) customer.kybStatus = row.kybStatus as KybStatus;
  } else {
    customer.customerType = "INDIVIDUAL";
    if (row.kycStatus !== null) customer.kycStatus = row.kycStatus as KycStatus;
  }
  return customer as Customer;
}
