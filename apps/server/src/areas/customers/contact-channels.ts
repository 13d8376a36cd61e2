/**
 * Contact verification: which of a customer's contact details must be
 * confirmed with a one-time code, and where each stands.
 *
 * The live contract reports a `contactVerification` object only for
 * customers whose provider requires it, with only the channels it requires.
 * The sandbox's simulated provider requires it of customers whose `region`
 * is in CONTACT_VERIFICATION_REGIONS (the EEA), for the contact details they
 * have: a customer with no phone number has no `phone` channel. A channel is
 * VERIFIED while the customer's current value is the one confirmed, so a new
 * email address is PENDING again without anything else being written.
 */
import type { Schemas } from "@payments-sandbox/client";
import { CONTACT_VERIFICATION_REGIONS } from "@payments-sandbox/sandbox-rules";
import type { Row } from "../../db/query.js";

export type ContactChannel = "EMAIL" | "PHONE";
type ContactVerification = Schemas["ContactVerification"];
type ContactRow = Pick<
  Row<"Customer">,
  "region" | "email" | "phoneNumber" | "verifiedEmail" | "verifiedPhoneNumber"
>;

/** How each channel reads and records its contact detail. */
export const CHANNELS = {
  EMAIL: {
    key: "email",
    noun: "email address",
    path: "verify-email",
    value: (row: ContactRow) => row.email,
    verified: (row: ContactRow) => row.verifiedEmail,
    valueColumn: "email",
    column: "verifiedEmail",
  },
  PHONE: {
    key: "phone",
    noun: "phone number",
    path: "verify-phone",
    value: (row: ContactRow) => row.phoneNumber,
    verified: (row: ContactRow) => row.verifiedPhoneNumber,
    valueColumn: "phoneNumber",
    column: "verifiedPhoneNumber",
  },
} as const satisfies Record<
  ContactChannel,
  {
    key: keyof ContactVerification;
    noun: string;
    path: string;
    value: (row: ContactRow) => string | null;
    verified: (row: ContactRow) => string | null;
    /** The customer's column holding the detail, and the one holding its confirmed value. */
    valueColumn: "email" | "phoneNumber";
    column: "verifiedEmail" | "verifiedPhoneNumber";
  }
>;

/** Whether the customer's provider asks it to confirm its contact details. */
export function requiresContactVerification(row: Pick<ContactRow, "region">): boolean {
  return row.region !== null && CONTACT_VERIFICATION_REGIONS.has(row.region);
}

/** A channel's status, or undefined when the customer does not have to confirm it. */
export function channelStatus(
  row: ContactRow,
  channel: ContactChannel,
): Schemas["ContactVerificationStatus"] | undefined {
  const { value, verified } = CHANNELS[channel];
  const current = value(row);
  if (!requiresContactVerification(row) || current === null) return undefined;
  return verified(row) === current ? "VERIFIED" : "PENDING";
}

/** The customer's `contactVerification`, absent when no channel is required. */
export function contactVerificationOf(row: ContactRow): ContactVerification | undefined {
  const email = channelStatus(row, "EMAIL");
  const phone = channelStatus(row, "PHONE");
  if (email === undefined && phone === undefined) return undefined;
  return { ...(email ? { email } : {}), ...(phone ? { phone } : {}) };
}
