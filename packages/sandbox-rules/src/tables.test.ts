import { describe, expect, it } from "vitest";
import {
  scaCodeOutcome,
  beneficiaryVerificationOutcome,
  cardAuthorizationOutcome,
  cardFundingSourceOutcome,
  cardIssuanceOutcome,
  contactVerificationCodeOutcome,
  evaluate,
  evaluateUmaReceiver,
  kybOutcome,
  kycOutcome,
  mintedIdReadsAsMagic,
  individualKycOutcome,
  invitationConfigurationOutcome,
  oidcTokenOutcome,
  otpOutcome,
  passkeySignatureOutcome,
  quoteDestinationOutcome,
  stablecoinOperationOutcome,
  stablecoinProviderAccountOutcome,
  transferOutcome,
  walletSignatureOutcome,
} from "./evaluate.js";
import {
  CONTACT_VERIFICATION_REGIONS,
  MAGIC_TABLES,
  QUOTE_DESTINATION_TABLE,
  SANDBOX_CONTACT_VERIFICATION_CODE,
  SANDBOX_DEFAULT_UMA_DOMAIN,
  SANDBOX_OTP_CODE,
  SANDBOX_SCA_CODE,
  SCA_REGIONS,
} from "./tables.js";

describe("every table", () => {
  it("has a distinct id", () => {
    expect(new Set(MAGIC_TABLES.map((t) => t.id)).size).toBe(MAGIC_TABLES.length);
  });

  it.each(MAGIC_TABLES.map((t) => [t.id, t] as const))(
    "%s has distinct, reachable rows",
    (_id, table) => {
      const matches = table.rows.map((r) => r.match);
      expect(new Set(matches).size).toBe(matches.length);
      for (const row of table.rows) {
        // An input that ends in the row's key; a row the table's own reader cannot produce is dead.
        const input =
          table.key.kind === "umaLocalPart"
            ? `${row.match}@sandbox.uma.money`
            : table.key.kind === "exact"
              ? row.match
              : `X-${row.match}`;
        expect(evaluate(table, input)).toEqual({
          outcome: row.outcome,
          matched: row.match,
          row,
          key: row.match,
        });
        expect(row.description.trim()).not.toBe("");
      }
    },
  );

  it("uses the default row when no key can be read", () => {
    for (const table of MAGIC_TABLES) {
      expect(evaluate(table, undefined)).toEqual({
        outcome: table.other.outcome,
        matched: null,
        row: table.other,
        key: null,
      });
    }
  });
});

describe("KYB", () => {
  it.each([
    ["Acme Ltd REG-000001", "PENDING", "001"],
    ["Acme Ltd REG-000002", "REJECTED", "002"],
    ["HRB 12345", "APPROVED", null],
    ["REG-00200X", "APPROVED", null],
    ["02", "APPROVED", null],
  ])("%j → %s", (registrationNumber, kybStatus, matched) => {
    const result = kybOutcome(registrationNumber);
    expect(result.outcome).toEqual({ kybStatus });
    expect(result.matched).toBe(matched);
  });
});

describe("individual KYC", () => {
  it.each([
    ["Sam Lee001", "PENDING", "MANUAL_REVIEW", "001"],
    ["Ana Souza 002", "REJECTED", "REFUSE", "002"],
    ["Kim Park003", "UNVERIFIED", "POOR_QUALITY_DOCUMENT", "003"],
    ["Jane Doe", "APPROVED", "REFUSE", null],
    ["Jo", "APPROVED", "REFUSE", null],
  ])("%j → %s", (fullName, kycStatus, onVerification, matched) => {
    const result = individualKycOutcome(fullName);
    expect(result.outcome).toEqual({ kycStatus, onVerification });
    expect(result.matched).toBe(matched);
  });
});

describe("KYC", () => {
  it.each([
    ["Smith001", "PENDING", "001"],
    ["Garcia-002", "REJECTED", "002"],
    ["Lovelace", "APPROVED", null],
    ["Smith 0002", "REJECTED", "002"],
    ["Li", "APPROVED", null],
  ])("%j → %s", (lastName, kycStatus, matched) => {
    const result = kycOutcome(lastName);
    expect(result.outcome).toEqual({ kycStatus });
    expect(result.matched).toBe(matched);
  });
});

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

describe("UMA receivers", () => {
  it.each([
    ["$success.usd@sandbox.uma.money", "USD", [{ afterSeconds: 0, status: "COMPLETED" }]],
    ["$success.eur@sandbox.uma.money", "EUR", [{ afterSeconds: 0, status: "COMPLETED" }]],
    ["$SUCCESS.MXN@Sandbox.Uma.Money", "MXN", [{ afterSeconds: 0, status: "COMPLETED" }]],
    ["$pending.long.usd@sandbox.uma.money", "USD", []],
    [
      "$fail.compliance.usd@sandbox.uma.money",
      "USD",
      [
        {
          afterSeconds: 0,
          status: "FAILED",
          failureReason: "COMPLIANCE_REJECTED",
          refund: { status: "COMPLETED", reason: "TRANSACTION_FAILED" },
        },
      ],
    ],
  ])("%j → %s", (address, currency, steps) => {
    const result = evaluateUmaReceiver(address);
    expect(result.outcome).toEqual({ kind: "RECEIVER", currency, steps });
    expect(result.matched).toBe(result.address?.localPart);
  });

  it("answers 404 UMA_NOT_FOUND for any other well-formed address on the sandbox host", () => {
    for (const address of [
      "$nobody@sandbox.uma.money",
      "$success.gbp@sandbox.uma.money",
      "$success@sandbox.uma.money",
    ]) {
      const result = evaluateUmaReceiver(address);
      expect(result.outcome).toMatchObject({
        kind: "REJECT",
        status: 404,
        errorCode: "UMA_NOT_FOUND",
      });
      expect(result.matched).toBeNull();
      expect(result.address?.domain).toBe("sandbox.uma.money");
    }
  });

  it("answers 400 INVALID_UMA_ADDRESS for a malformed address, whatever its host", () => {
    for (const address of [
      "success.usd@sandbox.uma.money",
      "$success.usd",
      "$success usd@sandbox.uma.money",
      "$a@bad_host",
    ]) {
      const result = evaluateUmaReceiver(address);
      expect(result.outcome).toMatchObject({
        kind: "REJECT",
        status: 400,
        errorCode: "INVALID_UMA_ADDRESS",
      });
      expect(result.address).toBeNull();
    }
  });

  it("leaves addresses on other hosts to the server", () => {
    const result = evaluateUmaReceiver("$success.usd@vasp.example");
    expect(result.outcome).toEqual({ kind: "NOT_SANDBOX_HOST" });
    expect(result.address?.address).toBe("$success.usd@vasp.example");
    // A subdomain of the sandbox host is another host.
    expect(evaluateUmaReceiver("$success.usd@x.sandbox.uma.money").outcome.kind).toBe(
      "NOT_SANDBOX_HOST",
    );
  });
});

describe("OTP", () => {
  it("accepts only the sandbox code", () => {
    expect(SANDBOX_OTP_CODE).toBe("000000");
    expect(otpOutcome("000000").outcome).toEqual({ kind: "ACCEPT" });
    for (const code of ["123456", "000001", " 000000", "00000", ""]) {
      expect(otpOutcome(code).outcome).toMatchObject({
        kind: "REJECT",
        status: 401,
        errorCode: "UNAUTHORIZED",
        reason: "Invalid OTP code",
      });
    }
  });
});

describe("legacy authentication shortcuts", () => {
  it("refuses the old literal OIDC token and checks every other token's claims", () => {
    expect(oidcTokenOutcome("sandbox-valid-oidc-token").outcome).toMatchObject({
      kind: "REJECT",
      status: 401,
      errorCode: "UNAUTHORIZED",
    });
    for (const token of ["a.b.c", "sandbox-valid-oidc-token ", ""]) {
      expect(oidcTokenOutcome(token).outcome).toEqual({ kind: "CHECK_CLAIMS" });
    }
  });

  it("knows the legacy passkey signature and the legacy wallet signature, exactly", () => {
    expect(passkeySignatureOutcome("sandbox-valid-passkey-signature").outcome).toEqual({
      kind: "LEGACY_ACCEPT",
    });
    expect(walletSignatureOutcome("sandbox-valid-signature").outcome).toEqual({
      kind: "LEGACY_ACCEPT",
    });
    // Each value works only where it belongs.
    expect(passkeySignatureOutcome("sandbox-valid-signature").outcome).toEqual({ kind: "VERIFY" });
    expect(walletSignatureOutcome("sandbox-valid-passkey-signature").outcome).toEqual({
      kind: "VERIFY",
    });
    expect(walletSignatureOutcome("SANDBOX-VALID-SIGNATURE").outcome).toEqual({ kind: "VERIFY" });
  });
});

describe("card issuance", () => {
  const cardholderId = "Customer:019542f5-b3e7-1d02-0000-000000000042";
  it.each([
    ["card-emp-aary-001", [], "4001"],
    [
      "card-emp-aary-002",
      [{ afterSeconds: 0, state: "CLOSED", stateReason: "ISSUER_REJECTED" }],
      "4002",
    ],
    ["card-emp-aary-005", [{ afterSeconds: 30, state: "ACTIVE" }], "4005"],
    ["card-emp-aary-003", [{ afterSeconds: 0, state: "ACTIVE" }], "4003"],
    ["card-emp-aary", [{ afterSeconds: 0, state: "ACTIVE" }], "4741"],
  ])("platformCardId %j → %o, last4 %s", (platformCardId, steps, last4) => {
    const result = cardIssuanceOutcome({ platformCardId, cardholderId });
    expect(result.outcome).toEqual({ steps });
    expect(result.identifier).toBe(platformCardId);
    expect(result.last4).toBe(last4);
  });

  it("reads cardholderId when platformCardId is absent", () => {
    const result = cardIssuanceOutcome({
      cardholderId: "Customer:019542f5-b3e7-1d02-0000-000000000005",
    });
    expect(result.outcome).toEqual({ steps: [{ afterSeconds: 30, state: "ACTIVE" }] });
    expect(result.matched).toBe("005");
    expect(result.last4).toBe("4005");
    // A present platformCardId wins over a magic cardholderId.
    expect(
      cardIssuanceOutcome({ platformCardId: "card-9", cardholderId: "Customer:x-001" }).matched,
    ).toBeNull();
  });
});

describe("card funding source", () => {
  it.each([
    ["InternalAccount:019542f5-b3e7-1d02-0000-000000000002", "002"],
    ["InternalAccount:019542f5-b3e7-1d02-0000-000000000003", "003"],
  ])("%j → 400 FUNDING_SOURCE_INELIGIBLE", (accountId, matched) => {
    const result = cardFundingSourceOutcome(accountId);
    expect(result.outcome).toMatchObject({
      kind: "REJECT",
      status: 400,
      errorCode: "FUNDING_SOURCE_INELIGIBLE",
    });
    expect(result.matched).toBe(matched);
  });

  it("binds any other account", () => {
    expect(
      cardFundingSourceOutcome("InternalAccount:019542f5-b3e7-1d02-0000-0000000000a1").outcome,
    ).toEqual({
      kind: "ELIGIBLE",
    });
  });
});

describe("card authorization", () => {
  it.each([
    ["COFFEE SHOP 002", { kind: "DECLINE", declineReason: "INSUFFICIENT_FUNDS" }],
    ["COFFEE SHOP 003", { kind: "DECLINE", declineReason: "CARD_PAUSED" }],
    ["COFFEE SHOP 005", { kind: "APPROVE", pull: { afterSeconds: 30, pullStatus: "CONFIRMED" } }],
    [
      "COFFEE SHOP 006",
      {
        kind: "APPROVE",
        pull: { afterSeconds: 0, pullStatus: "FAILED", transactionStatus: "EXCEPTION" },
      },
    ],
    [
      "BLUE BOTTLE COFFEE SF",
      { kind: "APPROVE", pull: { afterSeconds: 0, pullStatus: "CONFIRMED" } },
    ],
    ["COFFEE SHOP 004", { kind: "APPROVE", pull: { afterSeconds: 0, pullStatus: "CONFIRMED" } }],
  ])("%j → %o", (descriptor, outcome) => {
    expect(cardAuthorizationOutcome(descriptor).outcome).toEqual(outcome);
  });
});

describe("SCA code", () => {
  it("accepts the sandbox code only", () => {
    expect(scaCodeOutcome(SANDBOX_SCA_CODE).outcome).toEqual({ kind: "ACCEPT" });
    expect(scaCodeOutcome("123457").outcome).toMatchObject({
      kind: "REJECT",
      status: 400,
      errorCode: "INVALID_INPUT",
    });
    expect(scaCodeOutcome(undefined).outcome).toMatchObject({ kind: "REJECT" });
  });

  it("challenges the European Economic Area only", () => {
    expect(SCA_REGIONS.has("DE")).toBe(true);
    expect(SCA_REGIONS.has("NO")).toBe(true);
    expect(SCA_REGIONS.has("US")).toBe(false);
    expect(SCA_REGIONS.has("GB")).toBe(false);
  });
});

describe("contact verification code", () => {
  it("accepts the sandbox code only", () => {
    expect(contactVerificationCodeOutcome(SANDBOX_CONTACT_VERIFICATION_CODE).outcome).toEqual({
      kind: "ACCEPT",
    });
    for (const code of ["123457", " 123456", "000000", undefined]) {
      expect(contactVerificationCodeOutcome(code).outcome).toMatchObject({
        kind: "REJECT",
        status: 400,
        errorCode: "INVALID_INPUT",
      });
    }
  });

  it("is required in the European Economic Area only", () => {
    expect(CONTACT_VERIFICATION_REGIONS.has("FR")).toBe(true);
    expect(CONTACT_VERIFICATION_REGIONS.has("IS")).toBe(true);
    expect(CONTACT_VERIFICATION_REGIONS.has("US")).toBe(false);
    expect(CONTACT_VERIFICATION_REGIONS.has("CH")).toBe(false);
  });
});

describe("invitation configuration", () => {
  it("refuses the placeholder UMA domain and accepts any other", () => {
    expect(invitationConfigurationOutcome(SANDBOX_DEFAULT_UMA_DOMAIN).outcome).toMatchObject({
      kind: "REJECT",
      status: 400,
      errorCode: "INVITATIONS_NOT_CONFIGURED",
    });
    for (const domain of ["wallet.example.com", "sandbox.localhost", "uma.sandbox.localhost.com"]) {
      expect(invitationConfigurationOutcome(domain).outcome).toEqual({ kind: "CONFIGURED" });
    }
  });
});

describe("stablecoin provider account link", () => {
  it.each([
    ["brale_client_002", "INVALID"],
    ["brale_client_003", "REVOKED"],
    ["brale_client_123", "ACTIVE"],
    ["ab", "ACTIVE"],
  ])("%s → %s", (apiClientId, status) => {
    expect(stablecoinProviderAccountOutcome(apiClientId).outcome).toEqual({ status });
  });
});

describe("stablecoin mints and burns", () => {
  it("reads the last 3 digits of the amount in cents", () => {
    expect(stablecoinOperationOutcome("100002").outcome).toEqual({
      kind: "FAIL",
      failureReason: "PROVIDER_TRANSFER_FAILED",
    });
    expect(stablecoinOperationOutcome("100003").outcome).toEqual({ kind: "NEVER_FUNDED" });
    expect(stablecoinOperationOutcome("2503").outcome).toMatchObject({
      kind: "REJECT",
      status: 503,
      errorCode: "SERVICE_UNAVAILABLE",
    });
    for (const cents of ["100000", "1", "99", "100004"]) {
      expect(stablecoinOperationOutcome(cents).outcome).toEqual({ kind: "COMPLETE" });
    }
  });
});

describe("ids the sandbox mints", () => {
  it("reads an internal account id or a customer id with a magic suffix as magic, and no other", () => {
    expect(mintedIdReadsAsMagic("InternalAccount", "InternalAccount:0195-0002")).toBe(true);
    expect(mintedIdReadsAsMagic("InternalAccount", "InternalAccount:0195-0003")).toBe(true);
    expect(mintedIdReadsAsMagic("InternalAccount", "InternalAccount:0195-0004")).toBe(false);
    expect(mintedIdReadsAsMagic("Customer", "Customer:0195-0001")).toBe(true);
    expect(mintedIdReadsAsMagic("Customer", "Customer:0195-0005")).toBe(true);
    expect(mintedIdReadsAsMagic("Customer", "Customer:0195-0003")).toBe(false);
    expect(mintedIdReadsAsMagic("Card", "Card:0195-0002")).toBe(false);
  });
});
