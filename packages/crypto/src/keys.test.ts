import { createECDH } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  CryptoError,
  compressPublicKey,
  generateP256KeyPair,
  isValidP256PublicKeyHex,
  publicKeyFromPrivateKey,
  publicKeysEqual,
  uncompressPublicKey,
} from "./index.js";

// P-256 group order n: not a valid private key.
const ORDER_HEX = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551";
// A point that is not on the curve (valid length and prefix).
const OFF_CURVE = "04" + "00".repeat(31) + "01" + "00".repeat(31) + "01";

describe("generateP256KeyPair", () => {
  it("returns consistent hex encodings", () => {
    const kp = generateP256KeyPair();
    expect(kp.privateKeyHex).toMatch(/^[0-9a-f]{64}$/);
    expect(kp.publicKeyHex).toMatch(/^0[23][0-9a-f]{64}$/);
    expect(kp.publicKeyUncompressedHex).toMatch(/^04[0-9a-f]{128}$/);
    expect(kp.publicKeyUncompressedHex.slice(2, 66)).toBe(kp.publicKeyHex.slice(2));
    // Independent derivation with OpenSSL.
    const ecdh = createECDH("prime256v1");
    ecdh.setPrivateKey(Buffer.from(kp.privateKeyHex, "hex"));
    expect(ecdh.getPublicKey("hex", "uncompressed")).toBe(kp.publicKeyUncompressedHex);
    expect(ecdh.getPublicKey("hex", "compressed")).toBe(kp.publicKeyHex);
  });

  it("produces fresh keys", () => {
    expect(generateP256KeyPair().privateKeyHex).not.toBe(generateP256KeyPair().privateKeyHex);
  });
});

describe("publicKeyFromPrivateKey", () => {
  it("derives both forms", () => {
    const kp = generateP256KeyPair();
    expect(publicKeyFromPrivateKey(kp.privateKeyHex)).toBe(kp.publicKeyHex);
    expect(publicKeyFromPrivateKey(kp.privateKeyHex, false)).toBe(kp.publicKeyUncompressedHex);
  });

  it.each([["00".repeat(32)], [ORDER_HEX], ["01"], ["zz".repeat(32)]])("rejects %s", (bad) => {
    expect(() => publicKeyFromPrivateKey(bad)).toThrow(CryptoError);
  });
});

describe("compress / uncompress", () => {
  it("accepts either form and converts", () => {
    const kp = generateP256KeyPair();
    expect(compressPublicKey(kp.publicKeyUncompressedHex)).toBe(kp.publicKeyHex);
    expect(compressPublicKey(kp.publicKeyHex)).toBe(kp.publicKeyHex);
    expect(uncompressPublicKey(kp.publicKeyHex)).toBe(kp.publicKeyUncompressedHex);
    expect(uncompressPublicKey(kp.publicKeyUncompressedHex.toUpperCase())).toBe(
      kp.publicKeyUncompressedHex,
    );
  });

  it("rejects points off the curve and bad lengths", () => {
    expect(() => uncompressPublicKey(OFF_CURVE)).toThrow(CryptoError);
    expect(() => compressPublicKey("02" + "00".repeat(31))).toThrow(CryptoError);
  });
});

describe("isValidP256PublicKeyHex", () => {
  const kp = generateP256KeyPair();

  it("accepts real keys, with and without a form", () => {
    expect(isValidP256PublicKeyHex(kp.publicKeyHex)).toBe(true);
    expect(isValidP256PublicKeyHex(kp.publicKeyUncompressedHex)).toBe(true);
    expect(isValidP256PublicKeyHex(kp.publicKeyHex, "compressed")).toBe(true);
    expect(isValidP256PublicKeyHex(kp.publicKeyUncompressedHex, "uncompressed")).toBe(true);
  });

  it("enforces the requested form", () => {
    expect(isValidP256PublicKeyHex(kp.publicKeyHex, "uncompressed")).toBe(false);
    expect(isValidP256PublicKeyHex(kp.publicKeyUncompressedHex, "compressed")).toBe(false);
  });

  it("rejects non-points", () => {
    expect(isValidP256PublicKeyHex(OFF_CURVE)).toBe(false);
    expect(isValidP256PublicKeyHex("05" + kp.publicKeyHex.slice(2))).toBe(false);
    expect(isValidP256PublicKeyHex(kp.publicKeyHex.slice(0, 64))).toBe(false);
    expect(isValidP256PublicKeyHex("")).toBe(false);
    expect(isValidP256PublicKeyHex(42)).toBe(false);
  });
});

describe("publicKeysEqual", () => {
  it("compares as points", () => {
    const a = generateP256KeyPair();
    const b = generateP256KeyPair();
    expect(publicKeysEqual(a.publicKeyHex, a.publicKeyUncompressedHex)).toBe(true);
    expect(publicKeysEqual(a.publicKeyUncompressedHex, a.publicKeyHex.toUpperCase())).toBe(true);
    expect(publicKeysEqual(a.publicKeyHex, b.publicKeyHex)).toBe(false);
    expect(publicKeysEqual(a.publicKeyHex, b.publicKeyUncompressedHex)).toBe(false);
    expect(publicKeysEqual(OFF_CURVE, OFF_CURVE)).toBe(false);
  });
});
