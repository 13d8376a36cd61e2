/**
 * Every sandbox magic value, as data. The server evaluates these tables and the docs are rendered
 * from them; a new magic value is a new row here and nowhere else.
 */
import { CARD_LAST4_PREFIX, cardLast4 } from "./cards.js";
import type {
  BeneficiaryVerificationOutcome,
  CardAuthorizationOutcome,
  CardFundingSourceOutcome,
  CardIssuanceOutcome,
  ContactVerificationCodeOutcome,
  InvitationConfigurationOutcome,
  KybOutcome,
  KycOutcome,
  IndividualKycOutcome,
  LegacyShortcutOutcome,
  OidcTokenOutcome,
  OtpOutcome,
  ScaCodeOutcome,
  DocumentReviewOutcome,
  QuoteDestinationOutcome,
  StablecoinOperationOutcome,
  StablecoinProviderAccountOutcome,
  TransferOutcome,
  UmaSandboxReceiverOutcome,
} from "./outcomes.js";
import type { MagicTable } from "./types.js";
import { SANDBOX_UMA_HOST, UMA_LOCAL_PART_MAX_LENGTH } from "./uma.js";

/** The one OTP code the sandbox accepts for EMAIL_OTP and SMS_OTP. */
export const SANDBOX_OTP_CODE = "000000";

/** The code of every strong customer authentication challenge (SMS) in the sandbox. */
export const SANDBOX_SCA_CODE = "123456";
/** How long a hosted KYC link can be used, on the platform's sandbox clock. */
export const KYC_LINK_SECONDS = 3600;

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

/**
 * The UMA domain a new sandbox platform starts with (the `umaDomain` column's default in the
 * server's schema). It is under `.localhost`, so nothing outside the machine can reach it.
 */
export const SANDBOX_DEFAULT_UMA_DOMAIN = "uma.sandbox.localhost";

/** The link of an invitation: on the inviting platform's UMA domain. */
export function invitationUrl(umaDomain: string, code: string): string {
  return `https://${umaDomain}/i/${code}`;
}

/** An OIDC token's `iat` may be at most this many seconds before the request. */
export const OIDC_TOKEN_MAX_AGE_SECONDS = 60;
/** Clock skew tolerated on the sandbox OIDC `iat` check (both directions). */
export const OIDC_CLOCK_SKEW_SECONDS = 5;
/** The old fixed OIDC token of earlier sandboxes; now refused. */
export const LEGACY_OIDC_TOKEN = "sandbox-valid-oidc-token";
/** Legacy `signature` of a passkey assertion that skips WebAuthn checks. */
export const LEGACY_PASSKEY_SIGNATURE = "sandbox-valid-passkey-signature";
/** Legacy `Service-Wallet-Signature` header value accepted in place of a stamp. */
export const LEGACY_WALLET_SIGNATURE = "sandbox-valid-signature";

/** Seconds a transfer with suffix 005 stays pending before it fails. */
export const TRANSFER_DELAYED_FAILURE_SECONDS = 30;
/** Seconds a quote payment with suffix 003 takes to complete. */
export const QUOTE_SLOW_COMPLETION_SECONDS = 360;
/** Seconds after completion at which a quote payment with suffix 005 is returned. */
export const QUOTE_RETURN_AFTER_SECONDS = 60;
/** Seconds a card with suffix 005 takes to activate. */
export const CARD_DELAYED_ACTIVATION_SECONDS = 30;
/** Seconds a card pull with descriptor suffix 005 stays pending before it confirms. */
export const CARD_DELAYED_PULL_SECONDS = 30;

const ACCOUNT_IDENTIFIER =
  "the external account's primary identifier (account number, IBAN, CLABE, Spark wallet address, etc.)";

export const KYB_TABLE: MagicTable<KybOutcome> = {
  id: "kyb",
  title: "KYB verification",
  description: "Sets the `kybStatus` a business customer receives when KYB verification runs.",
  appliesTo:
    "`POST /verifications` for a business customer (created with `kybStatus` `UNVERIFIED`), and the registration number entered on the page of `POST /customers/{customerId}/kyc-link`",
  field: "`businessInfo.registrationNumber`",
  key: { kind: "suffix", mode: "digits" },
  rows: [
    {
      match: "001",
      outcome: { kybStatus: "PENDING" },
      description: "`kybStatus` `PENDING`: verification stays pending",
    },
    {
      match: "002",
      outcome: { kybStatus: "REJECTED" },
      description: "`kybStatus` `REJECTED`: verification is rejected",
    },
  ],
  other: {
    outcome: { kybStatus: "APPROVED" },
    description: "`kybStatus` `APPROVED`: verification is approved",
  },
  examples: ["Acme Ltd REG-000002", "HRB 123001", "12345678"],
};

export const INDIVIDUAL_KYC_TABLE: MagicTable<IndividualKycOutcome> = {
  id: "individualKyc",
  title: "Individual customer KYC",
  description:
    "Sets the `kycStatus` an individual customer receives at creation, and what submitting it with `POST /verifications` then does.",
  appliesTo:
    "`POST /customers` with `customerType` `INDIVIDUAL`, and the full name entered on the page of `POST /customers/{customerId}/kyc-link` (which sets `kycStatus` to the status below)",
  field: "`fullName`",
  key: { kind: "suffix", mode: "characters" },
  rows: [
    {
      match: "001",
      outcome: { kycStatus: "PENDING", onVerification: "MANUAL_REVIEW" },
      description:
        "`kycStatus` `PENDING`; `POST /verifications` answers `PENDING_MANUAL_REVIEW` once `fullName`, `birthDate`, `nationality`, `address`, `idType` and `identifier` are all present, `RESOLVE_ERRORS` naming each missing one before",
    },
    {
      match: "002",
      outcome: { kycStatus: "REJECTED", onVerification: "REFUSE" },
      description: "`kycStatus` `REJECTED` at once; `POST /verifications` is refused with 400",
    },
    {
      match: "003",
      outcome: { kycStatus: "UNVERIFIED", onVerification: "POOR_QUALITY_DOCUMENT" },
      description:
        "`kycStatus` `UNVERIFIED`; `POST /verifications` answers `RESOLVE_ERRORS` with a `POOR_QUALITY_DOCUMENT` error",
    },
  ],
  other: {
    outcome: { kycStatus: "APPROVED", onVerification: "REFUSE" },
    description: "`kycStatus` `APPROVED` at once; `POST /verifications` is refused with 400",
  },
  examples: ["Sam Lee001", "Ana Souza 002", "Kim Park003", "Jane Doe"],
};

export const KYC_TABLE: MagicTable<KycOutcome> = {
  id: "kyc",
  title: "Beneficial owner KYC",
  description: "Sets the `kycStatus` of a beneficial owner (an individual) when KYC runs.",
  appliesTo: "`POST /beneficial-owners` and `PATCH /beneficial-owners/{beneficialOwnerId}`",
  field: "`personalInfo.lastName`",
  key: { kind: "suffix", mode: "characters" },
  rows: [
    {
      match: "001",
      outcome: { kycStatus: "PENDING" },
      description: "`kycStatus` `PENDING`: verification stays pending",
    },
    {
      match: "002",
      outcome: { kycStatus: "REJECTED" },
      description: "`kycStatus` `REJECTED`: verification is rejected",
    },
  ],
  other: {
    outcome: { kycStatus: "APPROVED" },
    description: "`kycStatus` `APPROVED`: verification is approved",
  },
  examples: ["Smith001", "Garcia-002", "Lovelace"],
};

export const BENEFICIARY_VERIFICATION_TABLE: MagicTable<BeneficiaryVerificationOutcome> = {
  id: "beneficiaryVerification",
  title: "Beneficiary name verification",
  description:
    "Sets the `beneficiaryVerificationStatus` of an external account on a rail that verifies beneficiary names. Suffixes 1xx are reserved for this table, so they never collide with the transfer and quote suffixes (002 to 007).",
  appliesTo: "creating an external account",
  field: ACCOUNT_IDENTIFIER,
  key: { kind: "suffix", mode: "digits" },
  rows: [
    {
      match: "102",
      outcome: { kind: "STATUS", beneficiaryVerificationStatus: "NOT_MATCHED" },
      description: "`NOT_MATCHED`: the account is valid but the name differs",
    },
    {
      match: "103",
      outcome: { kind: "STATUS", beneficiaryVerificationStatus: "PARTIAL_MATCH" },
      description: "`PARTIAL_MATCH`: the name is a fuzzy match",
    },
    {
      match: "104",
      outcome: { kind: "STATUS", beneficiaryVerificationStatus: "PENDING" },
      description: "`PENDING`: verification is still in progress",
    },
    {
      match: "105",
      outcome: {
        kind: "REJECT",
        status: 400,
        errorCode: "INVALID_BANK_ACCOUNT",
        message: "Sandbox: an account identifier ending in 105 simulates an invalid bank account.",
      },
      description: "No status: the request fails with 400 `INVALID_BANK_ACCOUNT` (invalid account)",
    },
    {
      match: "106",
      outcome: { kind: "STATUS", beneficiaryVerificationStatus: "UNSUPPORTED" },
      description: "`UNSUPPORTED`: the rail has no name verification",
    },
    {
      match: "107",
      outcome: { kind: "STATUS", beneficiaryVerificationStatus: "CHECKED_BY_RECEIVING_FI" },
      description:
        "`CHECKED_BY_RECEIVING_FI`: verification is deferred to the receiving institution",
    },
  ],
  other: {
    outcome: { kind: "STATUS", beneficiaryVerificationStatus: "MATCHED" },
    description: "`MATCHED`: the account is valid and the name matches",
  },
  examples: ["000123456105", "testuser.103@pix.com.br", "GB29 NWBK 6016 1331 9268 19"],
};

export const TRANSFER_TABLE: MagicTable<TransferOutcome> = {
  id: "transfer",
  title: "Transfer in and transfer out",
  description: "Decides whether a same-currency transfer with an external account succeeds.",
  appliesTo: "`POST /transfer-in` and `POST /transfer-out`",
  field: ACCOUNT_IDENTIFIER,
  key: { kind: "suffix", mode: "digits" },
  rows: [
    {
      match: "002",
      outcome: {
        kind: "FAIL",
        delaySeconds: 0,
        cause: "INSUFFICIENT_FUNDS",
        incomingFailureReason: "COLLECTION_FAILED",
        outgoingFailureReason: "LIMIT_EXCEEDED",
      },
      description:
        "Insufficient funds: fails immediately (`COLLECTION_FAILED` in, `LIMIT_EXCEEDED` out)",
    },
    {
      match: "003",
      outcome: {
        kind: "FAIL",
        delaySeconds: 0,
        cause: "ACCOUNT_CLOSED",
        incomingFailureReason: "COLLECTION_FAILED",
        outgoingFailureReason: "ACCOUNT_INVALID",
      },
      description:
        "Account closed or invalid: fails immediately (`COLLECTION_FAILED` in, `ACCOUNT_INVALID` out)",
    },
    {
      match: "004",
      outcome: {
        kind: "FAIL",
        delaySeconds: 0,
        cause: "BANK_REJECTED",
        incomingFailureReason: "COLLECTION_FAILED",
        outgoingFailureReason: "ACCOUNT_CANNOT_RECEIVE",
      },
      description:
        "The bank rejects the transfer (`COLLECTION_FAILED` in, `ACCOUNT_CANNOT_RECEIVE` out)",
    },
    {
      match: "005",
      outcome: {
        kind: "FAIL",
        delaySeconds: TRANSFER_DELAYED_FAILURE_SECONDS,
        cause: "TIMEOUT",
        incomingFailureReason: "COLLECTION_FAILED",
        outgoingFailureReason: "COUNTERPARTY_POST_TX_FAILED",
      },
      description: `Stays \`PENDING\` about ${TRANSFER_DELAYED_FAILURE_SECONDS} seconds, then fails (\`COLLECTION_FAILED\` in, \`COUNTERPARTY_POST_TX_FAILED\` out)`,
    },
  ],
  other: {
    outcome: { kind: "SUCCEED", delaySeconds: 0 },
    description: "Succeeds",
  },
  examples: ["DE89 3704 0044 0532 0130 02", "alice005@bank.example", "123456789"],
};

export const QUOTE_DESTINATION_TABLE: MagicTable<QuoteDestinationOutcome> = {
  id: "quoteDestination",
  title: "Quote to an external account",
  description:
    "Decides what happens to the payment of a quote whose destination is an external account, once the quote is executed. Times count from execution.",
  appliesTo: "`POST /quotes/{quoteId}/execute`, or `POST /sandbox/send` for real-time funding",
  field: "the destination external account's account number (or other primary identifier)",
  key: { kind: "suffix", mode: "digits" },
  rows: [
    {
      match: "002",
      outcome: {
        steps: [
          {
            afterSeconds: 0,
            status: "FAILED",
            failureReason: "QUOTE_EXECUTION_FAILED",
            refund: { status: "COMPLETED", reason: "TRANSACTION_FAILED" },
          },
        ],
      },
      description:
        "Quote execution fails: `FAILED` with `QUOTE_EXECUTION_FAILED`; the source is refunded (`refund.status` `COMPLETED`)",
    },
    {
      match: "003",
      outcome: { steps: [{ afterSeconds: QUOTE_SLOW_COMPLETION_SECONDS, status: "COMPLETED" }] },
      description: `Completes after about ${QUOTE_SLOW_COMPLETION_SECONDS / 60} minutes (\`COMPLETED\`)`,
    },
    {
      match: "004",
      outcome: {
        steps: [
          {
            afterSeconds: 0,
            status: "FAILED",
            failureReason: "COUNTERPARTY_POST_TX_FAILED",
            refund: { status: "COMPLETED", reason: "TRANSACTION_FAILED" },
          },
        ],
      },
      description:
        "Delivery to the counterparty fails: `FAILED` with `COUNTERPARTY_POST_TX_FAILED`; the source is refunded",
    },
    {
      match: "005",
      outcome: {
        steps: [
          { afterSeconds: 0, status: "COMPLETED" },
          {
            afterSeconds: QUOTE_RETURN_AFTER_SECONDS,
            status: "FAILED",
            failureReason: "PAYOUT_RETURNED",
            refund: { status: "COMPLETED", reason: "TRANSACTION_FAILED" },
          },
        ],
      },
      description: `Completes, then ${QUOTE_RETURN_AFTER_SECONDS} seconds later the receiving bank returns the payment: \`FAILED\` with \`PAYOUT_RETURNED\`; the source is refunded`,
    },
    {
      match: "006",
      outcome: {
        steps: [
          {
            afterSeconds: 0,
            status: "FAILED",
            refund: { status: "COMPLETED", reason: "USER_CANCELLATION" },
          },
        ],
      },
      description:
        "User cancellation: `FAILED` with a completed refund whose `reason` is `USER_CANCELLATION`",
    },
    {
      match: "007",
      outcome: {
        steps: [
          {
            afterSeconds: 0,
            status: "FAILED",
            failureReason: "COUNTERPARTY_POST_TX_FAILED",
            refund: { status: "FAILED", reason: "TRANSACTION_FAILED" },
          },
        ],
      },
      description:
        "Payout and refund both fail: `FAILED` with `COUNTERPARTY_POST_TX_FAILED` and a `FAILED` refund; the source is not refunded",
    },
  ],
  other: {
    outcome: { steps: [{ afterSeconds: 0, status: "COMPLETED" }] },
    description: "Successful payment (`COMPLETED`)",
  },
  examples: ["032180000118359003", "bob.006@pix.com.br", "DE89 3704 0044 0532 0130 00"],
};

export const UMA_RECEIVER_TABLE: MagicTable<UmaSandboxReceiverOutcome> = {
  id: "umaReceiver",
  title: "UMA receivers and senders",
  description: `Simulated UMA parties on the sandbox UMA host \`${SANDBOX_UMA_HOST}\`. As receivers they decide quotes and payments to a UMA address; as senders they decide the simulated incoming payments of \`POST /sandbox/uma/receive\`.`,
  appliesTo:
    "quoting and paying a UMA address (the receiver), and `POST /sandbox/uma/receive` (the sender)",
  field: `the local part of a receiver UMA address on \`${SANDBOX_UMA_HOST}\``,
  key: { kind: "umaLocalPart" },
  rows: [
    {
      match: "$success.usd",
      outcome: {
        kind: "RECEIVER",
        currency: "USD",
        steps: [{ afterSeconds: 0, status: "COMPLETED" }],
      },
      description: "USD; payments to or from it succeed",
    },
    {
      match: "$success.eur",
      outcome: {
        kind: "RECEIVER",
        currency: "EUR",
        steps: [{ afterSeconds: 0, status: "COMPLETED" }],
      },
      description: "EUR; payments to or from it succeed",
    },
    {
      match: "$success.mxn",
      outcome: {
        kind: "RECEIVER",
        currency: "MXN",
        steps: [{ afterSeconds: 0, status: "COMPLETED" }],
      },
      description: "MXN; payments to or from it succeed",
    },
    {
      match: "$pending.long.usd",
      outcome: { kind: "RECEIVER", currency: "USD", steps: [] },
      description: "USD; payments to or from it stay pending (the sandbox never completes them)",
    },
    {
      match: "$fail.compliance.usd",
      outcome: {
        kind: "RECEIVER",
        currency: "USD",
        steps: [
          {
            afterSeconds: 0,
            status: "FAILED",
            failureReason: "COMPLIANCE_REJECTED",
            refund: { status: "COMPLETED", reason: "TRANSACTION_FAILED" },
          },
        ],
      },
      description:
        "USD; payments to or from it fail the compliance check: `FAILED` with `COMPLIANCE_REJECTED`; a payment to it refunds the source, a payment from it credits nothing",
    },
    {
      match: "$fail.lookup",
      outcome: {
        kind: "REJECT",
        status: 400,
        errorCode: "LOOKUP_REQUEST_FAILED",
        message: "The receiver's institution did not answer the lookup; try again later.",
      },
      description:
        "A receiver whose institution does not answer: looking it up, quoting to it and receiving from it are refused with 400 `LOOKUP_REQUEST_FAILED`",
    },
  ],
  other: {
    outcome: {
      kind: "REJECT",
      status: 404,
      errorCode: "UMA_NOT_FOUND",
      message: `No UMA receiver exists at this address on ${SANDBOX_UMA_HOST}.`,
    },
    description: "No such party: 404 `UMA_NOT_FOUND`",
  },
  examples: [
    `$success.usd@${SANDBOX_UMA_HOST}`,
    `$Pending.Long.USD@${SANDBOX_UMA_HOST.toUpperCase()}`,
    `$nobody@${SANDBOX_UMA_HOST}`,
  ],
  notes: [
    `A UMA address is \`$username@domain\`. It is well-formed when it has exactly one \`@\` and no surrounding spaces; the username holds one or more of \`a-z\`, \`0-9\`, \`-\`, \`_\`, \`.\`, \`+\`, and the part before \`@\` is at most ${UMA_LOCAL_PART_MAX_LENGTH} characters including the \`$\`; the domain is a host name (dot-separated labels of letters, digits and inner hyphens, no port). Addresses are case-insensitive.`,
    "A malformed address fails with 400 `INVALID_UMA_ADDRESS`, whatever its host.",
    `Addresses on other hosts are not magic values: the sandbox resolves them like any address (for example a user of your own platform), and answers 404 \`UMA_NOT_FOUND\` when no receiver exists.`,
    "A payment in another currency than the party's is refused with 400 `INVALID_CURRENCY`.",
  ],
};

export const INVITATION_CONFIGURATION_TABLE: MagicTable<InvitationConfigurationOutcome> = {
  id: "invitationConfiguration",
  title: "UMA invitations",
  description: `Whether the platform can create UMA invitations. An invitation's \`url\` is a link on the platform's UMA domain, so a platform still on the sandbox's placeholder domain \`${SANDBOX_DEFAULT_UMA_DOMAIN}\` (which nobody else can open) has not configured invitations; \`PATCH /config\` with your own \`umaDomain\` configures them.`,
  appliesTo: "`POST /invitations`",
  field: "the platform's `umaDomain` (`GET /config`)",
  key: { kind: "exact" },
  rows: [
    {
      match: SANDBOX_DEFAULT_UMA_DOMAIN,
      outcome: {
        kind: "REJECT",
        status: 400,
        errorCode: "INVITATIONS_NOT_CONFIGURED",
        message: `Invitations are not configured: the platform's umaDomain is still the sandbox placeholder ${SANDBOX_DEFAULT_UMA_DOMAIN}; set your own with PATCH /config.`,
      },
      description: "400 `INVITATIONS_NOT_CONFIGURED`",
    },
  ],
  other: {
    outcome: { kind: "CONFIGURED" },
    description: `The invitation is created, with \`url\` \`${invitationUrl("<umaDomain>", "<code>")}\``,
  },
  examples: [SANDBOX_DEFAULT_UMA_DOMAIN, "wallet.example.com"],
  notes: [
    "Getting and claiming an invitation need no configuration: any platform of the sandbox can read and claim an invitation by its `code` (it travels in a link), while only the platform that created it can cancel it (403 otherwise).",
    "`expiresAt` is read on the creating platform's sandbox clock: once it has passed, a `PENDING` invitation reads `EXPIRED` and can no longer be claimed or cancelled (400 `INVALID_INPUT`).",
  ],
};

export const OTP_TABLE: MagicTable<OtpOutcome> = {
  id: "otp",
  title: "OTP code",
  description:
    "The one-time password of an `EMAIL_OTP` or `SMS_OTP` login. Nothing is sent by e-mail or SMS; the code is still sealed with HPKE and checked after real decryption, exactly as in production.",
  appliesTo: "`POST /auth/credentials/{id}/verify` for `EMAIL_OTP` and `SMS_OTP`",
  field: "`otp_code` inside the sealed `encryptedOtpBundle`",
  key: { kind: "exact" },
  rows: [
    {
      match: SANDBOX_OTP_CODE,
      outcome: { kind: "ACCEPT" },
      description: "The code is accepted",
    },
  ],
  other: {
    outcome: {
      kind: "REJECT",
      status: 401,
      errorCode: "UNAUTHORIZED",
      message: "Invalid OTP code",
      reason: "Invalid OTP code",
    },
    description: "401 `UNAUTHORIZED` with `reason` `Invalid OTP code`",
  },
  examples: [SANDBOX_OTP_CODE, "123456"],
};

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

const LEGACY_SHORTCUT_NOTE =
  "Legacy shortcuts are on by default; a server started with `SANDBOX_LEGACY_SHORTCUTS=false` refuses them and checks the value like any other.";

export const OIDC_TOKEN_TABLE: MagicTable<OidcTokenOutcome> = {
  id: "oidcToken",
  title: "OIDC token",
  description: `There is no fixed OAuth token: any JWT-shaped \`oidcToken\` is checked against the claim rules below; its signature segment may be a dummy unless the server has a key set for the issuer.`,
  appliesTo: "`POST /auth/credentials` and `POST /auth/credentials/{id}/verify` for `OAUTH`",
  field: "`oidcToken`",
  key: { kind: "exact" },
  rows: [
    {
      match: LEGACY_OIDC_TOKEN,
      outcome: {
        kind: "REJECT",
        status: 401,
        errorCode: "UNAUTHORIZED",
        message: "The OIDC token was rejected.",
        reason: `The literal ${LEGACY_OIDC_TOKEN} is no longer accepted; send a JWT-shaped OIDC token`,
      },
      description: "Refused: 401 `UNAUTHORIZED` (the old fixed token is no longer accepted)",
    },
  ],
  other: {
    outcome: { kind: "CHECK_CLAIMS" },
    description: "Checked against the claim rules",
  },
  examples: [LEGACY_OIDC_TOKEN, "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiIuLi4ifQ.c2lnbmF0dXJl"],
  notes: [
    "A token that is not three base64url segments with JSON header and payload: 400 `INVALID_INPUT`.",
    `Claims: \`iss\` a supported issuer; \`aud\` a non-empty string or a one-element string array; \`sub\` non-empty; \`iat\` numeric and at most ${OIDC_TOKEN_MAX_AGE_SECONDS} seconds before the request (${OIDC_CLOCK_SKEW_SECONDS} seconds of clock skew allowed either way); \`exp\` numeric and later than the request. Any failure: 401 \`UNAUTHORIZED\` with a \`reason\` naming the check.`,
    "Registration stores `iss`, `aud` and `sub`; verify requires the same three and a `nonce` equal to the lowercase hex SHA-256 of the exact `clientPublicKey` string.",
  ],
};

export const PASSKEY_SIGNATURE_TABLE: MagicTable<LegacyShortcutOutcome> = {
  id: "passkeySignature",
  title: "Passkey assertion signature",
  description:
    "Passkey logins are checked like production WebAuthn: credential id, challenge, origin and relying-party id, user-presence flag, signature and counter. One legacy value skips those checks.",
  appliesTo: "`POST /auth/credentials/{id}/verify` for `PASSKEY`",
  field: "`assertion.signature`",
  key: { kind: "exact" },
  rows: [
    {
      match: LEGACY_PASSKEY_SIGNATURE,
      outcome: { kind: "LEGACY_ACCEPT" },
      description:
        "WebAuthn checks are skipped; the `Request-Id` of a pending passkey challenge is still required and consumed",
    },
  ],
  other: {
    outcome: { kind: "VERIFY" },
    description: "Full WebAuthn verification",
  },
  examples: [LEGACY_PASSKEY_SIGNATURE],
  notes: [LEGACY_SHORTCUT_NOTE],
};

export const WALLET_SIGNATURE_TABLE: MagicTable<LegacyShortcutOutcome> = {
  id: "walletSignature",
  title: "Wallet signature",
  description:
    "The signed retry of an embedded-wallet action is checked as a real P-256 stamp over the exact pending `payloadToSign`, made by a key of an active session of the wallet (or the TEK for an OTP login). One legacy value is accepted instead of a stamp.",
  appliesTo:
    "Every signed retry: `POST /auth/credentials`, `DELETE /auth/credentials/{id}`, the OTP retry of `POST /auth/credentials/{id}/verify`, `POST /auth/sessions/{id}/refresh`, `DELETE /auth/sessions/{id}`, `PATCH /internal-accounts/{id}`, `POST /internal-accounts/{id}/export`",
  field: "the `Service-Wallet-Signature` header",
  key: { kind: "exact" },
  rows: [
    {
      match: LEGACY_WALLET_SIGNATURE,
      outcome: { kind: "LEGACY_ACCEPT" },
      description:
        "Accepted without a stamp; `Request-Id` must still name a pending, unexpired challenge and the body must match it",
    },
  ],
  other: {
    outcome: { kind: "VERIFY" },
    description: "Verified as a stamp",
  },
  examples: [LEGACY_WALLET_SIGNATURE],
  notes: [LEGACY_SHORTCUT_NOTE],
};

export const CARD_ISSUANCE_TABLE: MagicTable<CardIssuanceOutcome> = {
  id: "cardIssuance",
  title: "Card issuance",
  description:
    "Decides how a card created with `POST /cards` leaves `PROCESSING`. Each state change emits `CARD.STATE_CHANGE`. Times count from creation.",
  appliesTo: "`POST /cards`",
  field: "`platformCardId` (`cardholderId` when `platformCardId` is absent or empty)",
  key: { kind: "suffix", mode: "characters" },
  rows: [
    {
      match: "001",
      outcome: { steps: [] },
      description: "Stays `PROCESSING`",
    },
    {
      match: "002",
      outcome: { steps: [{ afterSeconds: 0, state: "CLOSED", stateReason: "ISSUER_REJECTED" }] },
      description: "The issuer rejects provisioning: `CLOSED` with `stateReason` `ISSUER_REJECTED`",
    },
    {
      match: "005",
      outcome: { steps: [{ afterSeconds: CARD_DELAYED_ACTIVATION_SECONDS, state: "ACTIVE" }] },
      description: `Activates after about ${CARD_DELAYED_ACTIVATION_SECONDS} seconds (\`ACTIVE\`)`,
    },
  ],
  other: {
    outcome: { steps: [{ afterSeconds: 0, state: "ACTIVE" }] },
    description: "Activates at once (`ACTIVE`)",
  },
  examples: ["card-emp-aary-001", "Customer:019542f5-b3e7-1d02-0000-000000000005", "card-42"],
  notes: [
    `Every sandbox card's \`last4\` is derived from the same identifier: \`${CARD_LAST4_PREFIX}\` followed by one digit per character of its last 3 characters. A digit stays itself; any other character becomes its Unicode code point modulo 10 (\`a\` is 97, so \`7\`); an identifier shorter than 3 characters is padded with \`0\` on the left. For example \`card-emp-aary-042\` gives \`${cardLast4("card-emp-aary-042")}\` and \`card-abc\` gives \`${cardLast4("card-abc")}\`.`,
  ],
};

export const CARD_FUNDING_SOURCE_TABLE: MagicTable<CardFundingSourceOutcome> = {
  id: "cardFundingSource",
  title: "Card funding source",
  description: "Decides whether an internal account can be bound to a card as a funding source.",
  appliesTo: "`POST /cards` and any binding of funding sources",
  field: "each internal account id in `fundingSources`",
  key: { kind: "suffix", mode: "characters" },
  rows: [
    {
      match: "002",
      outcome: {
        kind: "REJECT",
        status: 400,
        errorCode: "FUNDING_SOURCE_INELIGIBLE",
        message: "Sandbox: an internal account id ending in 002 fails the funding balance check.",
      },
      description: "400 `FUNDING_SOURCE_INELIGIBLE` (balance check fails)",
    },
    {
      match: "003",
      outcome: {
        kind: "REJECT",
        status: 400,
        errorCode: "FUNDING_SOURCE_INELIGIBLE",
        message: "Sandbox: an internal account id ending in 003 simulates a closed account.",
      },
      description: "400 `FUNDING_SOURCE_INELIGIBLE` (account closed)",
    },
  ],
  other: {
    outcome: { kind: "ELIGIBLE" },
    description: "The account is bound",
  },
  examples: ["InternalAccount:019542f5-b3e7-1d02-0000-000000000002"],
  notes: [
    "The sandbox never mints an internal account id ending in `002` or `003`, nor a customer id ending in a suffix of the card issuance table: ids are random, and about one in 2,000 would otherwise meet one of these outcomes by chance.",
  ],
};

export const CARD_AUTHORIZATION_TABLE: MagicTable<CardAuthorizationOutcome> = {
  id: "cardAuthorization",
  title: "Card authorization",
  description:
    "Decides a simulated card authorization. An approval still needs a funding source that covers the amount; otherwise the authorization is declined. A decline is answered by the simulation alone (`declineReason` and a `reason`): as in production, it makes no card transaction and sends no event. Times count from the authorization.",
  appliesTo:
    "`POST /sandbox/cards/{id}/simulate/authorization` and `/simulate/financial_authorization`; the decline rows also `/simulate/balance_inquiry`, `/simulate/credit_authorization`, `/simulate/financial_credit_authorization` and `/simulate/credit_authorization_advice`",
  field: "`merchant.descriptor`",
  key: { kind: "suffix", mode: "characters" },
  rows: [
    {
      match: "002",
      outcome: { kind: "DECLINE", declineReason: "INSUFFICIENT_FUNDS" },
      description: "Declined: `INSUFFICIENT_FUNDS` (the pull on the funding source fails)",
    },
    {
      match: "003",
      outcome: { kind: "DECLINE", declineReason: "CARD_PAUSED" },
      description: "Declined: `CARD_PAUSED`",
    },
    {
      match: "005",
      outcome: {
        kind: "APPROVE",
        pull: { afterSeconds: CARD_DELAYED_PULL_SECONDS, pullStatus: "CONFIRMED" },
      },
      description: `Approved; the pull stays pending about ${CARD_DELAYED_PULL_SECONDS} seconds, then confirms`,
    },
    {
      match: "006",
      outcome: {
        kind: "APPROVE",
        pull: { afterSeconds: 0, pullStatus: "FAILED", transactionStatus: "EXCEPTION" },
      },
      description: "Approved, but the pull reports failure: the transaction moves to `EXCEPTION`",
    },
  ],
  other: {
    outcome: { kind: "APPROVE", pull: { afterSeconds: 0, pullStatus: "CONFIRMED" } },
    description: "Approved (`AUTHORIZED`, one confirmed pull)",
  },
  examples: ["COFFEE SHOP 003", "BLUE BOTTLE COFFEE"],
  notes: [
    "A financial (single-message) authorization settles what it pulls at once: approved, it is `SETTLED`; with `005` it stays `SETTLED` while the pull is pending; with `006` the money goes back and it is `EXCEPTION`.",
    "A balance inquiry (an authorization of 0) and the credits to the card pull nothing: `002` and `003` decline them as above, and any other suffix, `005` and `006` included, approves them.",
  ],
};

/** Every table, in the order of the docs. */
/** The largest document the sandbox takes, in bytes. */
export const DOCUMENT_MAX_BYTES = 10 * 1024 * 1024;

const reviewRefusal = (
  errorCode: Exclude<DocumentReviewOutcome, { kind: "ACCEPT" }>["errorCode"],
  message: string,
): DocumentReviewOutcome => ({ kind: "REJECT", status: 400, errorCode, message });

export const DOCUMENT_REVIEW_TABLE: MagicTable<DocumentReviewOutcome> = {
  id: "documentReview",
  title: "Document review",
  description:
    "Decides the sandbox's review of an uploaded document: accepted (201), or refused with the review's 400 code and nothing stored.",
  appliesTo: "`POST /documents` and `PUT /documents/{documentId}`",
  field: "the uploaded file's name, without its extension (`passport001.pdf` reads `001`)",
  key: { kind: "suffix", mode: "characters" },
  rows: [
    {
      match: "001",
      outcome: reviewRefusal("LOW_QUALITY", "The document is too blurred or dark to read."),
      description: "400 `LOW_QUALITY`: unreadable",
    },
    {
      match: "002",
      outcome: reviewRefusal(
        "DATA_MISMATCH",
        "The document's details do not match the document holder's.",
      ),
      description: "400 `DATA_MISMATCH`: its details differ from the holder's",
    },
    {
      match: "003",
      outcome: reviewRefusal("EXPIRED", "The document has expired."),
      description: "400 `EXPIRED`: out of date",
    },
    {
      match: "004",
      outcome: reviewRefusal("SUSPECTED_FRAUD", "The document appears to have been altered."),
      description: "400 `SUSPECTED_FRAUD`: looks tampered with",
    },
    {
      match: "005",
      outcome: reviewRefusal(
        "UNSUITABLE_DOCUMENT",
        "This kind of document cannot be used for this verification.",
      ),
      description: "400 `UNSUITABLE_DOCUMENT`: the wrong kind of document",
    },
    {
      match: "006",
      outcome: reviewRefusal("INCOMPLETE", "Part of the document is missing."),
      description: "400 `INCOMPLETE`: pages or sides missing",
    },
  ],
  other: { outcome: { kind: "ACCEPT" }, description: "Accepted: the document is stored (201)" },
  examples: ["passport001", "id-card-front-004", "utility bill 006", "passport"],
  notes: [
    `Before review, a file must be a PDF, JPEG or PNG (by its content) of at most ${DOCUMENT_MAX_BYTES / 1024 / 1024} MB; anything else is 400 \`INVALID_INPUT\`.`,
  ],
};

/** How long after a stablecoin operation waiting for funding the sandbox takes the funds as received. */
export const STABLECOIN_FUNDING_SECONDS = 30;
/** How long the provider takes to process a funded stablecoin mint or burn. */
export const STABLECOIN_PROCESSING_SECONDS = 30;
/** How long a stablecoin operation waits for its funding before it expires (7 days). */
export const STABLECOIN_FUNDING_WINDOW_SECONDS = 7 * 24 * 3600;

export const STABLECOIN_PROVIDER_ACCOUNT_TABLE: MagicTable<StablecoinProviderAccountOutcome> = {
  id: "stablecoinProviderAccount",
  title: "Stablecoin provider account link",
  description:
    "Decides the status the provider reports for linked credentials. A link that is not `ACTIVE` is kept (201) but cannot be used: registering a stablecoin against it is 400 `STABLECOIN_PROVIDER_ACCOUNT_INVALID` or `STABLECOIN_PROVIDER_ACCOUNT_REVOKED`.",
  appliesTo: "`POST /stablecoin-provider-accounts`",
  field: "`apiClientId`",
  key: { kind: "suffix", mode: "characters" },
  rows: [
    {
      match: "002",
      outcome: { status: "INVALID" },
      description: "`INVALID`: the credentials do not verify",
    },
    {
      match: "003",
      outcome: { status: "REVOKED" },
      description: "`REVOKED`: the provider has revoked the credentials",
    },
  ],
  other: { outcome: { status: "ACTIVE" }, description: "`ACTIVE`, verified now" },
  examples: ["brale_client_002", "brale_client_003", "provider_client_123"],
};

export const STABLECOIN_OPERATION_TABLE: MagicTable<StablecoinOperationOutcome> = {
  id: "stablecoinOperation",
  title: "Stablecoin mints and burns",
  description: `Decides what happens to a stablecoin mint or burn. Times run on the sandbox clock: an operation waiting for funding (a \`WIRE\` mint, an \`EXTERNAL_ACCOUNT\` burn) is \`PENDING_FUNDING\` until the funds count as received ${STABLECOIN_FUNDING_SECONDS} seconds later; then it is \`PROCESSING\` for ${STABLECOIN_PROCESSING_SECONDS} seconds before its outcome.`,
  appliesTo:
    "`POST /stablecoins/{stablecoinId}/mints` and `POST /stablecoins/{stablecoinId}/burns`",
  field:
    "the amount in fiat cents (`amount` in the stablecoin's smallest unit, divided by 10^(decimals − 2): `1000020000` with 6 decimals reads `100002`)",
  key: { kind: "suffix", mode: "digits" },
  rows: [
    {
      match: "002",
      outcome: { kind: "FAIL", failureReason: "PROVIDER_TRANSFER_FAILED" },
      description:
        "`FAILED` with `failureReason` `PROVIDER_TRANSFER_FAILED` after processing; money taken from an internal account goes back to it",
    },
    {
      match: "003",
      outcome: { kind: "NEVER_FUNDED" },
      description: `An operation waiting for funding never receives it: \`EXPIRED\` at its \`expiresAt\` (${STABLECOIN_FUNDING_WINDOW_SECONDS / 86400} days); any other operation completes`,
    },
    {
      match: "503",
      outcome: {
        kind: "REJECT",
        status: 503,
        errorCode: "SERVICE_UNAVAILABLE",
        message: "The stablecoin provider is temporarily unavailable; retry later.",
      },
      description: "503 `SERVICE_UNAVAILABLE`: the provider is down, nothing is created",
    },
  ],
  other: {
    outcome: { kind: "COMPLETE" },
    description: "`COMPLETED`; a mint into an internal account credits it then",
  },
  examples: ["100000", "100002", "2503", "1000"],
  notes: [
    "An amount that is not a whole number of cents for the stablecoin's decimals, or is zero, is 400 `INVALID_AMOUNT`.",
  ],
};

export const MAGIC_TABLES: readonly MagicTable<unknown>[] = [
  KYB_TABLE,
  INDIVIDUAL_KYC_TABLE,
  KYC_TABLE,
  BENEFICIARY_VERIFICATION_TABLE,
  TRANSFER_TABLE,
  QUOTE_DESTINATION_TABLE,
  UMA_RECEIVER_TABLE,
  INVITATION_CONFIGURATION_TABLE,
  OTP_TABLE,
  SCA_CODE_TABLE,
  CONTACT_VERIFICATION_CODE_TABLE,
  OIDC_TOKEN_TABLE,
  PASSKEY_SIGNATURE_TABLE,
  WALLET_SIGNATURE_TABLE,
  CARD_ISSUANCE_TABLE,
  CARD_FUNDING_SOURCE_TABLE,
  CARD_AUTHORIZATION_TABLE,
  DOCUMENT_REVIEW_TABLE,
  STABLECOIN_PROVIDER_ACCOUNT_TABLE,
  STABLECOIN_OPERATION_TABLE,
];
