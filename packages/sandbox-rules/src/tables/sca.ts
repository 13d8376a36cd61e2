/**
 * Codes a customer answers: strong customer authentication (SCA) and the confirmation of an email
 * address or phone number. Both apply to the same regions, so they live together.
 */
import type { ContactVerificationCodeOutcome, ScaCodeOutcome } from "../outcomes.js";
import type { MagicTable } from "../types.js";

/** The code of every strong customer authentication challenge (SMS) in the sandbox. */
export const SANDBOX_SCA_CODE = "123456";

/** How long an SCA challenge can be answered. */
export const SCA_CHALLENGE_SECONDS = 300;
/** Wrong codes after which a challenge is spent. */
export const SCA_MAX_ATTEMPTS = 5;
/** How long the SCA session opened by a completed login lasts. */
export const SCA_SESSION_SECONDS = 900;
/**
 * Failed-login lockouts, by the cumulative count of failed logins that reaches each step; at
 * SCA_SUSPEND_AT_FAILED_LOGINS or more the customer is suspended (no automatic expiry).
 */
export const SCA_LOCKOUT_STEPS: readonly {
  readonly failedAttempts: number;
  readonly seconds: number;
}[] = [
  { failedAttempts: 5, seconds: 15 * 60 },
  { failedAttempts: 6, seconds: 30 * 60 },
  { failedAttempts: 7, seconds: 60 * 60 },
  { failedAttempts: 8, seconds: 24 * 60 * 60 },
];
export const SCA_SUSPEND_AT_FAILED_LOGINS = 9;
/** A 2FA reset's liveness check passes by itself this long after the reset starts. */
export const SCA_RESET_LIVENESS_SECONDS = 30;
/** How long a 2FA reset can be completed after it starts. */
export const SCA_RESET_WINDOW_SECONDS = 30 * 60;
/** Resets a customer may start in any 24 hours. */
export const SCA_RESET_MAX_PER_DAY = 5;
/**
 * The regions (ISO 3166-1 alpha-2) whose customers must pass strong customer
 * authentication: the European Economic Area.
 */
export const SCA_REGIONS: ReadonlySet<string> = new Set(
  "AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE IS LI NO".split(
    " ",
  ),
);

/** The code that confirms a customer's email address or phone number in the sandbox. */
export const SANDBOX_CONTACT_VERIFICATION_CODE = "123456";
/** How long a contact verification code can be confirmed after it was sent. */
export const CONTACT_VERIFICATION_CODE_SECONDS = 600;
/** Wrong codes after which a contact verification code is void (a new one must be sent). */
export const CONTACT_VERIFICATION_MAX_ATTEMPTS = 5;
/**
 * The regions (ISO 3166-1 alpha-2) whose customers must confirm their email address and phone
 * number: the European Economic Area, as for strong customer authentication.
 */
export const CONTACT_VERIFICATION_REGIONS: ReadonlySet<string> = SCA_REGIONS;

export const SCA_CODE_TABLE: MagicTable<ScaCodeOutcome> = {
  id: "scaCode",
  title: "SCA code",
  description: `The SMS or authenticator-app (TOTP) code of strong customer authentication: a quote's challenge, a factor enrolment, an SCA login, and trusting or untrusting a beneficiary. Only customers whose \`region\` is in the European Economic Area use SCA (${[...SCA_REGIONS].join(", ")}); every \`/sca/...\` operation answers 409 \`CONFLICT\` for any other customer. No SMS is sent. A challenge can be answered for ${SCA_CHALLENGE_SECONDS / 60} minutes, and ${SCA_MAX_ATTEMPTS} wrong codes spend it.`,
  appliesTo:
    "`POST /quotes/{quoteId}/authorize`, `POST /sca/factors/confirm` (TOTP), `POST /sca/login/complete`, `POST /customers/external-accounts/{externalAccountId}/trust/confirm` and `.../untrust/confirm`",
  field: "`code`",
  key: { kind: "exact" },
  rows: [
    {
      match: SANDBOX_SCA_CODE,
      outcome: { kind: "ACCEPT" },
      description: "The challenge is answered",
    },
  ],
  other: {
    outcome: {
      kind: "REJECT",
      status: 400,
      errorCode: "INVALID_INPUT",
      message: "The SCA code is not the one sent",
    },
    description: "400 `INVALID_INPUT` with `details.attemptsLeft`; the attempt counts",
  },
  examples: [SANDBOX_SCA_CODE, "000000"],
  notes: [
    `An expired challenge, or one spent by ${SCA_MAX_ATTEMPTS} wrong codes, is 400 \`INVALID_INPUT\` on the SCA operations (start again for a new challenge); a quote with a spent challenge has no pending challenge (409).`,
    `A completed SCA login opens a session of ${SCA_SESSION_SECONDS / 60} minutes (\`sessionExpiresAt\`). A wrong login code also counts as a failed login: at ${SCA_LOCKOUT_STEPS.map((step) => `${step.failedAttempts} → ${step.seconds / 60} min`).join(", ")} the customer's login is locked (423 \`ACCOUNT_LOCKED\` with \`details.lockedUntil\`), and at ${SCA_SUSPEND_AT_FAILED_LOGINS} or more it is suspended until \`RESET_PASSWORD_COMPLETED\` is recorded.`,
    `A 2FA reset's liveness check passes by itself ${SCA_RESET_LIVENESS_SECONDS} seconds (sandbox clock) after \`POST /sca/factors/reset\`; the reset can be completed for ${SCA_RESET_WINDOW_SECONDS / 60} minutes, and a customer may start ${SCA_RESET_MAX_PER_DAY} resets in 24 hours (then 429 \`RATE_LIMITED\`).`,
    "Passkeys are real WebAuthn: the credential and assertions are verified against the challenge, the sandbox's relying party and the `origin` sent.",
  ],
};

export const CONTACT_VERIFICATION_CODE_TABLE: MagicTable<ContactVerificationCodeOutcome> = {
  id: "contactVerificationCode",
  title: "Contact verification code",
  description: `The code that confirms a customer's email address or phone number. Only customers whose \`region\` is in the European Economic Area must confirm them (the same regions as SCA), and only the contact details they have; nothing is sent by email or SMS. A code can be confirmed for ${CONTACT_VERIFICATION_CODE_SECONDS / 60} minutes after it was sent, and ${CONTACT_VERIFICATION_MAX_ATTEMPTS} wrong codes make it void.`,
  appliesTo:
    "`POST /customers/{customerId}/verify-email/confirm` and `POST /customers/{customerId}/verify-phone/confirm`",
  field: "`code`",
  key: { kind: "exact" },
  rows: [
    {
      match: SANDBOX_CONTACT_VERIFICATION_CODE,
      outcome: { kind: "ACCEPT" },
      description: "The email address or phone number becomes `VERIFIED` in `contactVerification`",
    },
  ],
  other: {
    outcome: {
      kind: "REJECT",
      status: 400,
      errorCode: "INVALID_INPUT",
      message: "The verification code is not the one sent",
    },
    description: "400 `INVALID_INPUT` with `details.attemptsLeft`; the attempt counts",
  },
  examples: [SANDBOX_CONTACT_VERIFICATION_CODE, "000000"],
  notes: [
    "A confirmation with no code pending (none sent, the last one void or expired, or sent to an address or number the customer has since changed) is 400 `INVALID_INPUT`: send a new code first. Sending again replaces the pending code, with a new expiry and attempts count.",
    "A customer outside those regions, a contact detail the customer does not have, or one already `VERIFIED`: both operations answer 409 `INVALID_STATE_TRANSITION`.",
  ],
};
