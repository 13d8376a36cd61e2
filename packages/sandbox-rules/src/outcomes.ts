/**
 * Outcome types of the magic-value tables: values the server switches on. Delayed outcomes are
 * lists of steps with offsets, so the server schedules them generically (a row with a due time)
 * instead of knowing what each suffix means.
 */
import type { Rejection } from "./types.js";

export type KybStatus = "PENDING" | "REJECTED" | "APPROVED";
export interface KybOutcome {
  readonly kybStatus: KybStatus;
}

export type KycStatus = "PENDING" | "REJECTED" | "APPROVED";
export interface KycOutcome {
  readonly kycStatus: KycStatus;
}

/**
 * An individual customer's KYC at creation, and what a later `POST /verifications` does with it:
 * APPROVED and REJECTED are final (submitting again is refused), PENDING goes to manual review once
 * the data is complete, UNVERIFIED is sent back with a correctable document error.
 */
export type IndividualKycOutcome =
  | { readonly kycStatus: "APPROVED" | "REJECTED"; readonly onVerification: "REFUSE" }
  | { readonly kycStatus: "PENDING"; readonly onVerification: "MANUAL_REVIEW" }
  | { readonly kycStatus: "UNVERIFIED"; readonly onVerification: "POOR_QUALITY_DOCUMENT" };

export type BeneficiaryVerificationStatus =
  | "NOT_MATCHED"
  | "PARTIAL_MATCH"
  | "PENDING"
  | "UNSUPPORTED"
  | "CHECKED_BY_RECEIVING_FI"
  | "MATCHED";
export type BeneficiaryVerificationOutcome =
  | {
      readonly kind: "STATUS";
      readonly beneficiaryVerificationStatus: BeneficiaryVerificationStatus;
    }
  | Rejection<400, "INVALID_BANK_ACCOUNT">;

/** What goes wrong with a failing transfer, in the sandbox's words (the magic-value table). */
export type TransferCause = "INSUFFICIENT_FUNDS" | "ACCOUNT_CLOSED" | "BANK_REJECTED" | "TIMEOUT";
/** The live contract's failure reasons a sandbox transfer or payment can end with. */
export type IncomingFailureReason = "COLLECTION_FAILED" | "COMPLIANCE_REJECTED";
export type OutgoingFailureReason =
  | "QUOTE_EXECUTION_FAILED"
  | "COUNTERPARTY_POST_TX_FAILED"
  | "PAYOUT_RETURNED"
  | "COMPLIANCE_REJECTED"
  | "LIMIT_EXCEEDED"
  | "ACCOUNT_INVALID"
  | "ACCOUNT_CANNOT_RECEIVE";
/** `delaySeconds` counts from the creation of the transfer. */
export type TransferOutcome =
  | { readonly kind: "SUCCEED"; readonly delaySeconds: number }
  | {
      readonly kind: "FAIL";
      readonly delaySeconds: number;
      readonly cause: TransferCause;
      /** The reason a transfer in (a pull from the external account) reports. */
      readonly incomingFailureReason: IncomingFailureReason;
      /** The reason a transfer out (a push to the external account) reports. */
      readonly outgoingFailureReason: OutgoingFailureReason;
    };

export type PaymentFailureReason = OutgoingFailureReason | IncomingFailureReason;

/** The money a failed outgoing payment gives back to its source, and why. */
export interface RefundOutcome {
  /** COMPLETED credits the source back; FAILED leaves it debited. */
  readonly status: "COMPLETED" | "FAILED";
  readonly reason: "TRANSACTION_FAILED" | "USER_CANCELLATION" | "TIMEOUT";
}

/**
 * One status change of a payment. `afterSeconds` counts from execution (not from the
 * previous step); until the first step the payment keeps the status execution gave it.
 */
export type PaymentStep =
  | { readonly afterSeconds: number; readonly status: "COMPLETED" }
  | {
      readonly afterSeconds: number;
      readonly status: "FAILED";
      /** Absent when the refund's reason says it all (a user cancellation). */
      readonly failureReason?: PaymentFailureReason;
      /** For an outgoing payment: what happens to the debited amount. */
      readonly refund: RefundOutcome;
    };

/** An empty list means the payment stays pending: nothing is scheduled. */
export interface QuoteDestinationOutcome {
  readonly steps: readonly PaymentStep[];
}

export type UmaCurrency = "USD" | "EUR" | "MXN";
/** Outcomes of the UMA receiver table (addresses on the sandbox UMA host). */
export type UmaSandboxReceiverOutcome =
  | {
      readonly kind: "RECEIVER";
      /** The currency the receiver accepts. */
      readonly currency: UmaCurrency;
      /** What happens to a payment to this receiver after execution. */
      readonly steps: readonly PaymentStep[];
    }
  | Rejection<400, "LOOKUP_REQUEST_FAILED">
  | Rejection<404, "UMA_NOT_FOUND">;
/** Not a magic value: the server resolves the address as it resolves any other. */
export interface UmaNotSandboxHost {
  readonly kind: "NOT_SANDBOX_HOST";
}
export type UmaReceiverOutcome =
  UmaSandboxReceiverOutcome | Rejection<400, "INVALID_UMA_ADDRESS"> | UmaNotSandboxHost;

/** The code answering a strong customer authentication challenge. */
export type ScaCodeOutcome = { readonly kind: "ACCEPT" } | Rejection<400, "INVALID_INPUT">;

/** The code confirming a customer's email address or phone number. */
export type ContactVerificationCodeOutcome =
  { readonly kind: "ACCEPT" } | Rejection<400, "INVALID_INPUT">;

/** Whether a platform's configuration lets it create UMA invitations. */
export type InvitationConfigurationOutcome =
  { readonly kind: "CONFIGURED" } | Rejection<400, "INVITATIONS_NOT_CONFIGURED">;

export type OtpOutcome =
  | { readonly kind: "ACCEPT" }
  | (Rejection<401, "UNAUTHORIZED"> & { readonly reason: "Invalid OTP code" });

/**
 * A legacy sandbox shortcut value: accepted in place of the real proof (when the server's legacy
 * shortcuts are enabled), or checked for real like any other value.
 */
export type LegacyShortcutOutcome =
  { readonly kind: "LEGACY_ACCEPT" } | { readonly kind: "VERIFY" };

/** The OIDC token of an OAUTH registration or verify: checked against the claim rules, or refused. */
export type OidcTokenOutcome =
  | { readonly kind: "CHECK_CLAIMS" }
  | (Rejection<401, "UNAUTHORIZED"> & { readonly reason: string });

/** One state change after `POST /cards`; `afterSeconds` counts from creation. */
export type CardIssuanceStep =
  | { readonly afterSeconds: number; readonly state: "ACTIVE" }
  | {
      readonly afterSeconds: number;
      readonly state: "CLOSED";
      readonly stateReason: "ISSUER_REJECTED";
    };
/** The card is created PROCESSING; an empty list means it stays so. */
export interface CardIssuanceOutcome {
  readonly steps: readonly CardIssuanceStep[];
}

export type CardFundingSourceOutcome =
  { readonly kind: "ELIGIBLE" } | Rejection<400, "FUNDING_SOURCE_INELIGIBLE">;

export type CardDeclineReason = "INSUFFICIENT_FUNDS" | "CARD_PAUSED";
/** How the pull on the funding source resolves; `afterSeconds` counts from the authorization. */
export type CardPullResolution =
  | { readonly afterSeconds: number; readonly pullStatus: "CONFIRMED" }
  | {
      readonly afterSeconds: number;
      readonly pullStatus: "FAILED";
      /** The status the parent CardTransaction moves to. */
      readonly transactionStatus: "EXCEPTION";
    };
/** An approval still needs a funding source that covers the amount; that is not a magic value. */
export type CardAuthorizationOutcome =
  | { readonly kind: "APPROVE"; readonly pull: CardPullResolution }
  | { readonly kind: "DECLINE"; readonly declineReason: CardDeclineReason };

/** What the sandbox's document review decides about an upload. */
export type DocumentReviewOutcome =
  | { readonly kind: "ACCEPT" }
  | Rejection<
      400,
      | "LOW_QUALITY"
      | "DATA_MISMATCH"
      | "EXPIRED"
      | "SUSPECTED_FRAUD"
      | "UNSUITABLE_DOCUMENT"
      | "INCOMPLETE"
    >;

/** The status a stablecoin provider account link gets when its credentials are checked. */
export type StablecoinProviderAccountStatus = "ACTIVE" | "INVALID" | "REVOKED";
export interface StablecoinProviderAccountOutcome {
  readonly status: StablecoinProviderAccountStatus;
}

/**
 * What happens to a stablecoin mint or burn. `COMPLETE` and `FAIL` are decided once the provider
 * has processed it; `NEVER_FUNDED` leaves an operation that waits for funding (a wire mint, a burn
 * of stablecoins sent from outside) waiting until it expires; a rejection creates nothing.
 */
export type StablecoinOperationOutcome =
  | { readonly kind: "COMPLETE" }
  | { readonly kind: "FAIL"; readonly failureReason: string }
  | { readonly kind: "NEVER_FUNDED" }
  | Rejection<503, "SERVICE_UNAVAILABLE">;
