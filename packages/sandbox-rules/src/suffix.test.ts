import { describe, expect, it } from "vitest";
import { cardIssuanceIdentifier, cardLast4 } from "./cards.js";
import { suffixOf } from "./suffix.js";

describe("suffixOf, digits mode", () => {
  it.each([
    ["Acme Ltd REG-000002", "002"],
    ["DE89370400440532013002", "002"],
    ["DE89 3704 0044 0532 0130 02", "002"],
    ["123-456-005", "005"],
    ["032180000118359105", "105"],
    ["  000123456003  ", "003"],
    ["12-3", "123"],
  ])("reads the last 3 digits of %j as %j", (input, expected) => {
    expect(suffixOf(input, "digits")).toBe(expected);
  });

  it.each([
    ["alice002@bank.example", "002"],
    ["testuser.103@pix.com.br", "103"],
    ["$user002@sandbox.uma.money", "002"],
    ["user105@domain", "105"],
    // The domain may end in digits; only the username counts.
    ["alice@bank007.example", null],
    // The last '@' separates the domain.
    ["a@b004@host", "004"],
  ])("reads the username of a domain identifier %j as %j", (input, expected) => {
    expect(suffixOf(input, "digits")).toBe(expected);
  });

  it.each([
    ["ACC-12X", "a letter ends the value"],
    ["12", "fewer than 3 digits"],
    ["", "empty"],
    ["   ", "only spaces"],
    ["- 1-2", "fewer than 3 characters once separators go"],
    ["@bank.example", "empty username"],
    ["12@bank.example", "short username"],
    ["sp1qxyz", "non-digit wallet address ending"],
    ["١٢٣", "non-ASCII digits"],
    ["12.3", "a dot is not a separator"],
  ])("has no suffix for %j (%s)", (input) => {
    expect(suffixOf(input, "digits")).toBeNull();
  });

  it("has no suffix for a missing value", () => {
    expect(suffixOf(undefined, "digits")).toBeNull();
    expect(suffixOf(null, "characters")).toBeNull();
  });
});

describe("suffixOf, characters mode", () => {
  it.each([
    ["Smith001", "001"],
    ["Smith-002", "002"],
    ["Lovelace", "ace"],
    ["COFFEE SHOP 003 ", "003"],
    ["BLUE BOTTLE COFFEE SF", " SF"],
    ["InternalAccount:019542f5-b3e7-1d02-0000-000000000002", "002"],
    // Characters, not UTF-16 units.
    ["Müller😀ab", "😀ab"],
    // No domain rule here: the value is read as given.
    ["shop002@x", "2@x"],
    ["abc", "abc"],
  ])("reads the last 3 characters of %j as %j", (input, expected) => {
    expect(suffixOf(input, "characters")).toBe(expected);
  });

  it.each(["", "ab", " ab ", "😀a"])("has no suffix for %j", (input) => {
    expect(suffixOf(input, "characters")).toBeNull();
  });
});

describe("cardLast4", () => {
  it.each([
    ["card-emp-aary-042", "4042"],
    ["card-emp-aary-001", "4001"],
    ["card-abc", "4789"],
    ["Customer:019542f5-b3e7-1d02-0000-0000000000f3", "4023"],
    ["7", "4007"],
    ["", "4000"],
    [" card-123 ", "4123"],
  ])("derives the last4 of %j as %j", (input, expected) => {
    expect(cardLast4(input)).toBe(expected);
  });

  it("is always 4 ASCII digits", () => {
    for (const id of ["x", "😀😀😀", "ÄÖÜ", "a b", "---"])
      expect(cardLast4(id)).toMatch(/^[0-9]{4}$/);
  });
});

describe("cardIssuanceIdentifier", () => {
  it("prefers platformCardId and falls back to cardholderId when it is absent or empty", () => {
    const cardholderId = "Customer:019542f5-b3e7-1d02-0000-000000000005";
    expect(cardIssuanceIdentifier({ platformCardId: "card-001", cardholderId })).toBe("card-001");
    expect(cardIssuanceIdentifier({ cardholderId })).toBe(cardholderId);
    expect(cardIssuanceIdentifier({ platformCardId: null, cardholderId })).toBe(cardholderId);
    expect(cardIssuanceIdentifier({ platformCardId: " ", cardholderId })).toBe(cardholderId);
  });
});
