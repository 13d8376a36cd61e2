import * as portable from "@payments-sandbox/crypto";
import { describe, expect, it } from "vitest";
import { sha256Digits, sha256Hex } from "./sha256.js";

describe("sha256Hex on node:crypto", () => {
  it("is the portable digest of strings (as UTF-8) and of bytes", () => {
    const inputs = ["", "abc", '{"a":"CAFÉ ☕ 𝄞"}', "x".repeat(10_000)];
    for (const input of inputs) {
      expect(sha256Hex(input)).toBe(portable.sha256Hex(input));
      const bytes = new TextEncoder().encode(input);
      expect(sha256Hex(bytes)).toBe(portable.sha256Hex(bytes));
    }
    // FIPS 180-2's "abc".
    expect(sha256Hex("abc")).toBe(
      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
    );
  });
});

describe("sha256Digits", () => {
  it("is the digest read as a number, modulo 10^count, leading zeros kept, the same each time", () => {
    const full = BigInt(`0x${sha256Hex("abc")}`).toString();
    expect(sha256Digits("abc", 12)).toBe(full.slice(-12));
    expect(sha256Digits("abc", 12)).toBe(sha256Digits("abc", 12));
    expect(sha256Digits("abc", 90)).toHaveLength(90);
    expect(sha256Digits("abc", 90)).toBe(full.padStart(90, "0"));
    expect(sha256Digits("abd", 12)).not.toBe(sha256Digits("abc", 12));
  });
});
