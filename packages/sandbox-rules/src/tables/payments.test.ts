import { describe, expect, it } from "vitest";
import {
  beneficiaryVerificationOutcome,
  quoteDestinationOutcome,
  transferOutcome,
} from "../evaluate.js";
import { QUOTE_DESTINATION_TABLE } from "./payments.js";

describe("beneficiary name verification", () => {
  it.each([
    ["GB29NWBK60161331926102", "NOT_MATCHED"],
    ["032180000118359103", "PARTIAL_MATCH"],
    ["000123456104", "PENDING"],
    ["testuser.106@pix.com.br", "UNSUPPORTED"],
    ["DE89 3704 0044 0532 0131 07", "CHECKED_BY_RECEIVING_FI"],
    ["000123456002", "MATCHED"],
    ["000123456108", "MATCHED"],
  ])("%j → %s", (identifier, beneficiaryVerificationStatus) => {
    expect(beneficiaryVerificationOutcome(identifier).outcome).toEqual({
      kind: "STATUS",
      beneficiaryVerificationStatus,
    });
  });

  it("rejects suffix 105 with 400 INVALID_BANK_ACCOUNT", () => {
    for (const identifier of ["user105@domain", "000123456105", "DE89 3704 0044 0532 0131 05"]) {
      expect(beneficiaryVerificationOutcome(identifier).outcome).toMatchObject({
        kind: "REJECT",
        status: 400,
        errorCode: "INVALID_BANK_ACCOUNT",
      });
    }
  });
});

describe("transfer in and out", () => {
  it.each([
    [
      "DE89 3704 0044 0532 0130 02",
      {
        kind: "FAIL",
        delaySeconds: 0,
        cause: "INSUFFICIENT_FUNDS",
        incomingFailureReason: "COLLECTION_FAILED",
        outgoingFailureReason: "LIMIT_EXCEEDED",
      },
    ],
    [
      "032180000118359003",
      {
        kind: "FAIL",
        delaySeconds: 0,
        cause: "ACCOUNT_CLOSED",
        incomingFailureReason: "COLLECTION_FAILED",
        outgoingFailureReason: "ACCOUNT_INVALID",
      },
    ],
    [
      "alice004@bank.example",
      {
        kind: "FAIL",
        delaySeconds: 0,
        cause: "BANK_REJECTED",
        incomingFailureReason: "COLLECTION_FAILED",
        outgoingFailureReason: "ACCOUNT_CANNOT_RECEIVE",
      },
    ],
    [
      "123-456-005",
      {
        kind: "FAIL",
        delaySeconds: 30,
        cause: "TIMEOUT",
        incomingFailureReason: "COLLECTION_FAILED",
        outgoingFailureReason: "COUNTERPARTY_POST_TX_FAILED",
      },
    ],
    ["123456789", { kind: "SUCCEED", delaySeconds: 0 }],
    ["000123456105", { kind: "SUCCEED", delaySeconds: 0 }],
    ["sp1qq0002x", { kind: "SUCCEED", delaySeconds: 0 }],
  ])("%j → %o", (identifier, outcome) => {
    expect(transferOutcome(identifier).outcome).toEqual(outcome);
  });
});

describe("quote destination", () => {
  it.each([
    [
      "032180000118359002",
      [
        {
          afterSeconds: 0,
          status: "FAILED",
          failureReason: "QUOTE_EXECUTION_FAILED",
          refund: { status: "COMPLETED", reason: "TRANSACTION_FAILED" },
        },
      ],
    ],
    ["DE89370400440532013003", [{ afterSeconds: 360, status: "COMPLETED" }]],
    [
      "bob.004@pix.com.br",
      [
        {
          afterSeconds: 0,
          status: "FAILED",
          failureReason: "COUNTERPARTY_POST_TX_FAILED",
          refund: { status: "COMPLETED", reason: "TRANSACTION_FAILED" },
        },
      ],
    ],
    [
      "000123456005",
      [
        { afterSeconds: 0, status: "COMPLETED" },
        {
          afterSeconds: 60,
          status: "FAILED",
          failureReason: "PAYOUT_RETURNED",
          refund: { status: "COMPLETED", reason: "TRANSACTION_FAILED" },
        },
      ],
    ],
    [
      "$carol006@vasp.example",
      [
        {
          afterSeconds: 0,
          status: "FAILED",
          refund: { status: "COMPLETED", reason: "USER_CANCELLATION" },
        },
      ],
    ],
    [
      "GB29 NWBK 6016 1331 9260 07",
      [
        {
          afterSeconds: 0,
          status: "FAILED",
          failureReason: "COUNTERPARTY_POST_TX_FAILED",
          refund: { status: "FAILED", reason: "TRANSACTION_FAILED" },
        },
      ],
    ],
    ["000123456789", [{ afterSeconds: 0, status: "COMPLETED" }]],
  ])("%j → %o", (identifier, steps) => {
    expect(quoteDestinationOutcome(identifier).outcome).toEqual({ steps });
  });

  it("schedules steps in order of time", () => {
    for (const { outcome } of [...QUOTE_DESTINATION_TABLE.rows, QUOTE_DESTINATION_TABLE.other]) {
      const times = outcome.steps.map((s) => s.afterSeconds);
      expect(times).toEqual([...times].sort((a, b) => a - b));
    }
  });
});
