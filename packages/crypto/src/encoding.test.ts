import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  CryptoError,
  base64Decode,
  base64Encode,
  base64urlDecode,
  base64urlEncode,
  bytesToHex,
  hexToBytes,
  sha256Hex,
  utf8,
} from "./index.js";

describe("hex", () => {
  it("round-trips and emits lowercase", () => {
    expect(bytesToHex(new Uint8Array([0, 1, 0xab, 0xff]))).toBe("0001abff");
    expect(hexToBytes("0001ABff")).toEqual(new Uint8Array([0, 1, 0xab, 0xff]));
    expect(hexToBytes("")).toEqual(new Uint8Array());
  });

  it.each(["abc", "zz", "0x00", " 00", "0g"])("rejects %j", (bad) => {
    expect(() => hexToBytes(bad)).toThrow(CryptoError);
  });
});

describe("base64url", () => {
  // RFC 4648 section 10 vectors, unpadded.
  it.each([
    ["", ""],
    ["f", "Zg"],
    ["fo", "Zm8"],
    ["foo", "Zm9v"],
    ["foob", "Zm9vYg"],
    ["fooba", "Zm9vYmE"],
    ["foobar", "Zm9vYmFy"],
  ])("encodes %j as %j", (plain, encoded) => {
    expect(base64urlEncode(plain)).toBe(encoded);
    expect(new TextDecoder().decode(base64urlDecode(encoded))).toBe(plain);
  });

  it("uses the url-safe alphabet", () => {
    expect(base64urlEncode(new Uint8Array([0xfb, 0xff, 0xbf]))).toBe("-_-_");
    expect(base64urlDecode("-_-_")).toEqual(new Uint8Array([0xfb, 0xff, 0xbf]));
  });

  it("encodes strings as UTF-8", () => {
    expect(base64urlEncode("é")).toBe(Buffer.from("é", "utf8").toString("base64url"));
  });

  it("matches node's encoder on random data", () => {
    for (let n = 0; n < 40; n++) {
      const bytes = new Uint8Array(randomBytes(n));
      const expected = Buffer.from(bytes).toString("base64url");
      expect(base64urlEncode(bytes)).toBe(expected);
      expect(base64urlDecode(expected)).toEqual(bytes);
    }
  });

  it("tolerates correct padding", () => {
    expect(base64urlDecode("Zg==")).toEqual(utf8("f"));
  });

  it.each(["Zm9v+", "Zm9v/", "Zm9v!", "Z", "Zm9vY", "Zg=", "Zm9 v"])("rejects %j", (bad) => {
    expect(() => base64urlDecode(bad)).toThrow(CryptoError);
  });
});

describe("base64 (standard)", () => {
  it("matches node's encoder and pads", () => {
    const bytes = new Uint8Array([0xfb, 0xff]);
    expect(base64Encode(bytes)).toBe("+/8=");
    expect(base64Decode("+/8=")).toEqual(bytes);
    for (let n = 0; n < 40; n++) {
      const random = new Uint8Array(randomBytes(n));
      expect(base64Encode(random)).toBe(Buffer.from(random).toString("base64"));
    }
  });

  it("rejects url-safe characters", () => {
    expect(() => base64Decode("-_8=")).toThrow(CryptoError);
  });
});

describe("sha256Hex / utf8", () => {
  it("hashes the FIPS 180-2 'abc' vector", () => {
    const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    expect(sha256Hex("abc")).toBe(abc);
    expect(sha256Hex(new Uint8Array([0x61, 0x62, 0x63]))).toBe(abc);
  });

  it("hashes strings as UTF-8", () => {
    expect(sha256Hex("é")).toBe(sha256Hex(new Uint8Array([0xc3, 0xa9])));
    expect(utf8("é")).toEqual(new Uint8Array([0xc3, 0xa9]));
  });
});
