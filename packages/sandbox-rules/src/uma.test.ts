import { describe, expect, it } from "vitest";
import { isHostName, parseUmaAddress } from "./uma.js";

describe("parseUmaAddress", () => {
  it("parses a well-formed address", () => {
    expect(parseUmaAddress("$success.usd@sandbox.uma.money")).toEqual({
      ok: true,
      address: {
        address: "$success.usd@sandbox.uma.money",
        localPart: "$success.usd",
        username: "success.usd",
        domain: "sandbox.uma.money",
      },
    });
  });

  it("lower-cases, since addresses are case-insensitive", () => {
    const parsed = parseUmaAddress("$Alice.Smith@VASP.Example.COM");
    expect(parsed.ok && parsed.address.address).toBe("$alice.smith@vasp.example.com");
  });

  it.each([
    "$a@b",
    "$alice_1+tag-x.y@vasp.example",
    `$${"a".repeat(63)}@localhost`,
    "$007@sandbox.uma.money",
    `$a@${"a".repeat(63)}.com`,
  ])("accepts %j", (input) => {
    expect(parseUmaAddress(input).ok).toBe(true);
  });

  it.each([
    ["", "empty"],
    ["alice@vasp.example", "no $"],
    ["$alice", "no domain"],
    ["$@vasp.example", "empty username"],
    ["$al ice@vasp.example", "space in username"],
    ["$alice!@vasp.example", "character outside a-z0-9-_.+"],
    ["$alicé@vasp.example", "non-ASCII letter"],
    ["$a@b@vasp.example", "two @"],
    [" $alice@vasp.example", "leading space"],
    ["$alice@vasp.example ", "trailing space"],
    [`$${"a".repeat(64)}@vasp.example`, "local part over 64 characters"],
    ["$alice@", "empty domain"],
    ["$alice@vasp..example", "empty label"],
    ["$alice@vasp.example.", "trailing dot"],
    ["$alice@-vasp.example", "label starts with a hyphen"],
    ["$alice@vasp-.example", "label ends with a hyphen"],
    ["$alice@vasp_x.example", "underscore in host"],
    ["$alice@vasp.example:8080", "port"],
    [`$alice@${"a".repeat(64)}.com`, "label over 63 characters"],
    [`$alice@${Array(64).fill("abc").join(".")}`, "host over 253 characters"],
  ])("rejects %j (%s)", (input) => {
    const parsed = parseUmaAddress(input);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problem.length).toBeGreaterThan(0);
  });
});

describe("isHostName", () => {
  it("takes dot-separated labels of letters, digits and inner hyphens", () => {
    expect(isHostName("sandbox.uma.money")).toBe(true);
    expect(isHostName("my-platform.example")).toBe(true);
    expect(isHostName("localhost")).toBe(true);
  });

  it("refuses empty labels, edge hyphens, long labels, ports and other characters", () => {
    for (const bad of [
      "a..b",
      ".example",
      "example.",
      "-a.example",
      "a-.example",
      `${"a".repeat(64)}.example`,
      "example.com:443",
      "ex_ample.com",
      "",
    ]) {
      expect(isHostName(bad), bad).toBe(false);
    }
    expect(
      isHostName(`${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`),
    ).toBe(true);
    expect(
      isHostName(`${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(62)}`),
    ).toBe(false);
  });
});
