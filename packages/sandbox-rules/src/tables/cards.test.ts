import { describe, expect, it } from "vitest";
import {
  cardAuthorizationOutcome,
  cardFundingSourceOutcome,
  cardIssuanceOutcome,
  mintedIdReadsAsMagic,
} from "../evaluate.js";

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
