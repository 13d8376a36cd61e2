import type { Schemas } from "@payments-sandbox/client";
import { sha256Digits } from "../../crypto/sha256.js";
import type { Row } from "../../db/query.js";

// Where money from outside would be paid to reach an account. The sandbox
// derives fixed, obviously fictitious coordinates from the account id; paying
// them does nothing (POST /sandbox/internal-accounts/{id}/fund stands in).

type PaymentInstructions = Schemas["PaymentInstructions"];
type Account = Pick<Row<"InternalAccount">, "id" | "currency" | "type" | "customerId">;

/** A widely published test routing number (passes the ABA checksum). */
const SANDBOX_ROUTING_NUMBER = "110000000";
/** The German bank code of the sandbox's fictitious bank. */
const SANDBOX_BANK_CODE = "10000000";
const SANDBOX_BANK_NAME = "Sandbox Bank";

/** The reference a payer quotes so the payment reaches this account. */
function referenceOf(id: string): string {
  return `SBX-${id.slice(id.indexOf(":") + 1, id.indexOf(":") + 9).toUpperCase()}`;
}

/** An IBAN with correct check digits (ISO 13616, mod 97). */
function iban(country: string, bban: string): string {
  const numeric = `${bban}${country}00`.replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  const check = 98n - (BigInt(numeric) % 97n);
  return `${country}${check.toString().padStart(2, "0")}${bban}`;
}

export function fundingInstructionsFor(account: Account): PaymentInstructions[] {
  if (account.type !== "INTERNAL_FIAT") return [];
  return payToInstructions({
    key: account.id,
    currency: account.currency,
    reference: referenceOf(account.id),
    isPlatformAccount: account.customerId === null,
    notes: "Include the reference so the payment reaches this account.",
  });
}

/**
 * Coordinates to pay `currency` to, derived from `key` (an account or a
 * quote id), with the reference that tells the payment apart. USD and EUR
 * only: the sandbox has no coordinates for other currencies.
 */
export function payToInstructions(payee: {
  key: string;
  currency: string;
  reference: string;
  isPlatformAccount: boolean;
  notes: string;
}): PaymentInstructions[] {
  const common = { instructionsNotes: payee.notes, isPlatformAccount: payee.isPlatformAccount };
  const { key, reference } = payee;
  switch (payee.currency) {
    case "USD":
      return [
        {
          ...common,
          accountOrWalletInfo: {
            accountType: "USD_ACCOUNT",
            accountNumber: `4${sha256Digits(key, 10)}`,
            routingNumber: SANDBOX_ROUTING_NUMBER,
            bankName: SANDBOX_BANK_NAME,
            paymentRails: ["ACH", "WIRE"],
            reference,
          },
        },
      ];
    case "EUR":
      return [
        {
          ...common,
          accountOrWalletInfo: {
            accountType: "EUR_ACCOUNT",
            iban: iban("DE", `${SANDBOX_BANK_CODE}${sha256Digits(key, 10)}`),
            paymentRails: ["SEPA", "SEPA_INSTANT"],
            reference,
          },
        },
      ];
    default:
      return [];
  }
}
