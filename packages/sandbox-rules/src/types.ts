/**
 * Shapes shared by every magic-value table. A table is plain data: the server decides sandbox
 * outcomes by evaluating it, and the docs are rendered from it, so the two cannot drift.
 */

/**
 * How a suffix is taken from a value.
 * - `digits`: the last 3 digits; spaces and hyphens are ignored, and for a value with a domain
 *   part (`name@domain`) only the part before the last `@` is read.
 * - `characters`: the last 3 characters, as given.
 */
export type SuffixMode = "digits" | "characters";

/** Which part of the input a table matches its rows against. */
export type KeyReader =
  | { readonly kind: "suffix"; readonly mode: SuffixMode }
  /** The `$localpart` of a UMA address, lower-cased (UMA addresses are case-insensitive). */
  | { readonly kind: "umaLocalPart" }
  /** The whole value, compared exactly. */
  | { readonly kind: "exact" };

export interface MagicRow<O> {
  /** The key that selects this row: a suffix such as `"002"`, a UMA local part, or an exact value. */
  readonly match: string;
  readonly outcome: O;
  /** Human text for the docs; code never reads it. */
  readonly description: string;
}

export interface DefaultRow<O> {
  readonly outcome: O;
  readonly description: string;
}

export type MagicTableId =
  | "kyb"
  | "kyc"
  | "individualKyc"
  | "beneficiaryVerification"
  | "transfer"
  | "quoteDestination"
  | "umaReceiver"
  | "otp"
  | "scaCode"
  | "contactVerificationCode"
  | "invitationConfiguration"
  | "oidcToken"
  | "passkeySignature"
  | "walletSignature"
  | "cardIssuance"
  | "cardFundingSource"
  | "cardAuthorization"
  | "documentReview"
  | "stablecoinProviderAccount"
  | "stablecoinOperation";

export interface MagicTable<O> {
  readonly id: MagicTableId;
  readonly title: string;
  /** What the table controls, for the docs. */
  readonly description: string;
  /** The operations whose outcome the table decides. */
  readonly appliesTo: string;
  /** The field that is read, as shown in the docs (Markdown). */
  readonly field: string;
  readonly key: KeyReader;
  readonly rows: readonly MagicRow<O>[];
  /** The row used when no row matches, or when no key can be read from the input. */
  readonly other: DefaultRow<O>;
  /** Real-looking inputs shown in the docs together with the key read from them. */
  readonly examples: readonly string[];
  /** Extra rules for the docs (what is not a table row). */
  readonly notes?: readonly string[];
}

/** A request the server must refuse with this status and error code (the spec's Error object). */
export interface Rejection<Status extends number, Code extends string> {
  readonly kind: "REJECT";
  readonly status: Status;
  readonly errorCode: Code;
  readonly message: string;
}

export interface Evaluation<O> {
  readonly outcome: O;
  /** `match` of the row that decided, or `null` when the default ("other") row did. */
  readonly matched: string | null;
  readonly row: MagicRow<O> | DefaultRow<O>;
  /** The key read from the input; `null` when none could be read (too short, not digits, ...). */
  readonly key: string | null;
}
