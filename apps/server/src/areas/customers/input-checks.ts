import type { Schemas } from "@payments-sandbox/client";
import { parseUmaAddress } from "@payments-sandbox/sandbox-rules";
import { ApiError, fieldError } from "../../errors.js";

// What a customer request body must satisfy beyond the contract's schema:
// consent to the current end user terms, and a well-formed UMA address.

/** The version of the end user terms a consent must quote. */
export const END_USER_TERMS_VERSION = "2025-10-13";

export function checkTermsConsent(
  consent: Schemas["EndUserTermsConsentRequest"] | undefined,
): void {
  if (consent !== undefined && consent.termsVersion !== END_USER_TERMS_VERSION) {
    throw new ApiError(
      400,
      "END_USER_TERMS_VERSION_NOT_FOUND",
      `No end user terms have version ${consent.termsVersion}; the current version is ${END_USER_TERMS_VERSION} (GET /customers/end-user-terms)`,
      {
        details: {
          errors: [fieldError("body.endUserTermsConsent.termsVersion", "unknown version")],
        },
      },
    );
  }
}

/** A UMA address as stored: well-formed and lower case (UMA addresses are case-insensitive). */
export function umaAddressOf(address: string): string {
  const parsed = parseUmaAddress(address);
  if (!parsed.ok) {
    throw new ApiError(400, "INVALID_UMA_ADDRESS", `umaAddress ${address}: ${parsed.problem}`, {
      details: { errors: [fieldError("body.umaAddress", parsed.problem)] },
    });
  }
  return parsed.address.address;
}

/** `$<platformCustomerId>@<umaDomain>`, with what UMA does not allow in a username made `_`. */
export function defaultUmaAddress(platformCustomerId: string, umaDomain: string): string {
  const username = platformCustomerId.toLowerCase().replace(/[^a-z0-9._+-]/g, "_");
  return umaAddressOf(`$${username.slice(0, 63)}@${umaDomain}`);
}
