import * as portable from "@payments-sandbox/crypto";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "./sha256.js";

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
