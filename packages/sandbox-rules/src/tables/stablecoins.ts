/** Stablecoins: the provider's answer to linked credentials, and the fate of mints and burns. */
import type { StablecoinOperationOutcome, StablecoinProviderAccountOutcome } from "../outcomes.js";
import type { MagicTable } from "../types.js";

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
