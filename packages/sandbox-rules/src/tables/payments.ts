/**
 * Money leaving or entering through external accounts: beneficiary name verification, transfers in
 * and out, and the payments of quotes. All three read the external account's identifier.
 */
import type {
  BeneficiaryVerificationOutcome,
  QuoteDestinationOutcome,
  TransferOutcome,
} from "../outcomes.js";
import type { MagicTable } from "../types.js";

/** Seconds a transfer with suffix 005 stays pending before it fails. */
export const TRANSFER_DELAYED_FAILURE_SECONDS = 30;
/** Seconds a quote payment with suffix 003 takes to complete. */
export const QUOTE_SLOW_COMPLETION_SECONDS = 360;
/** Seconds after completion at which a quote payment with suffix 005 is returned. */
export const QUOTE_RETURN_AFTER_SECONDS = 60;

const ACCOUNT_IDENTIFIER =
  "the external account's primary identifier (account number, IBAN, CLABE, Spark wallet address, etc.)";

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
