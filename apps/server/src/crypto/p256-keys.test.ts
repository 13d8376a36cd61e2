import * as portable from "@payments-sandbox/crypto";
import { CryptoError } from "@payments-sandbox/crypto";
import { describe, expect, it } from "vitest";
import {
  compressPublicKey,
  generateP256KeyPair,
  isValidP256PublicKeyHex,
  publicKeyFromPrivateKey,
  publicKeysEqual,
  scalarBytes,
  uncompressedPoint,
  uncompressPublicKey,
} from "./p256-keys.js";

// The server's key helpers must give the portable library's exact hex for
// the same key, and refuse exactly what it refuses.

const key = portable.generateP256KeyPair();
const flipLast = (hex: string) => `${hex.slice(0, -1)}${hex.endsWith("0") ? "1" : "0"}`;

/** Keys of every kind a client could send, valid and not. */
const CANDIDATES: string[] = [
  key.publicKeyHex,
  key.publicKeyUncompressedHex,
  key.publicKeyHex.toUpperCase(),
  flipLast(key.publicKeyUncompressedHex), // off the curve
  `06${key.publicKeyUncompressedHex.slice(2)}`, // hybrid form: OpenSSL alone would accept it
  `07${key.publicKeyUncompressedHex.slice(2)}`,
  `05${key.publicKeyHex.slice(2)}`,
  `02${"00".repeat(31)}01`, // no point on P-256 has x = 1
  `02${"00".repeat(32)}`, // but one has x = 0
  `04${"00".repeat(64)}`,
  "00",
  "",
  key.publicKeyHex.slice(0, 64),
  `${key.publicKeyHex}00`,
  `zz${key.publicKeyHex.slice(2)}`,
  `02${"ff".repeat(32)}`, // x ≥ p
];

describe("P-256 keys on node:crypto", () => {
  it("makes key pairs whose public halves are the portable library's for the private half", () => {
    for (let i = 0; i < 50; i++) {
      const pair = generateP256KeyPair();
      expect(pair.privateKeyHex).toMatch(/^[0-9a-f]{64}$/);
      expect(pair.publicKeyHex).toBe(portable.publicKeyFromPrivateKey(pair.privateKeyHex, true));
      expect(pair.publicKeyUncompressedHex).toBe(
        portable.publicKeyFromPrivateKey(pair.privateKeyHex, false),
      );
    }
  });

  it("pads a private scalar with leading zero bytes back to 32 bytes", () => {
    expect(scalarBytes(Buffer.from("01ff", "hex")).toString("hex")).toBe(`${"00".repeat(30)}01ff`);
    const full = Buffer.alloc(32, 7);
    expect(scalarBytes(full)).toBe(full);
  });

  it("derives, compresses and uncompresses to the same hex as the portable library", () => {
    for (let i = 0; i < 20; i++) {
      const pair = portable.generateP256KeyPair();
      expect(publicKeyFromPrivateKey(pair.privateKeyHex)).toBe(pair.publicKeyHex);
      expect(publicKeyFromPrivateKey(pair.privateKeyHex, false)).toBe(
        pair.publicKeyUncompressedHex,
      );
      expect(compressPublicKey(pair.publicKeyUncompressedHex)).toBe(pair.publicKeyHex);
      expect(compressPublicKey(pair.publicKeyHex)).toBe(pair.publicKeyHex);
      expect(compressPublicKey(pair.publicKeyHex.toUpperCase())).toBe(pair.publicKeyHex);
      expect(uncompressPublicKey(pair.publicKeyHex)).toBe(pair.publicKeyUncompressedHex);
    }
  });

  it("accepts and refuses the same public keys as the portable library", () => {
    for (const candidate of CANDIDATES) {
      for (const form of [undefined, "compressed", "uncompressed"] as const) {
        expect([candidate, form, isValidP256PublicKeyHex(candidate, form)]).toEqual([
          candidate,
          form,
          portable.isValidP256PublicKeyHex(candidate, form),
        ]);
      }
    }
    expect(isValidP256PublicKeyHex(42)).toBe(false);
    expect(() => compressPublicKey(`06${key.publicKeyUncompressedHex.slice(2)}`)).toThrow(
      CryptoError,
    );
  });

  it("answers a key read before as the first time, in a copy of its own", () => {
    for (let read = 0; read < 2; read++) {
      const point = uncompressedPoint(key.publicKeyHex);
      expect(point.toString("hex")).toBe(key.publicKeyUncompressedHex);
      point.fill(0);
    }
    // A key that failed once fails every time: only valid points are kept.
    const invalid = `02${"00".repeat(31)}01`; // well formed, but no point has x = 1
    expect(() => uncompressedPoint(invalid)).toThrow(CryptoError);
    expect(() => uncompressedPoint(invalid)).toThrow(CryptoError);
  });

  it("compares keys as points", () => {
    const other = portable.generateP256KeyPair();
    expect(publicKeysEqual(key.publicKeyHex, key.publicKeyUncompressedHex)).toBe(true);
    expect(publicKeysEqual(key.publicKeyHex, other.publicKeyHex)).toBe(false);
    expect(publicKeysEqual(key.publicKeyHex, flipLast(key.publicKeyUncompressedHex))).toBe(false);
    expect(publicKeysEqual(key.publicKeyHex, key.publicKeyHex.toUpperCase())).toBe(true);
    const notAPoint = `02${"00".repeat(31)}01`;
    expect(publicKeysEqual(notAPoint, notAPoint)).toBe(false);
    expect(portable.publicKeysEqual(notAPoint, notAPoint)).toBe(false);
  });

  it("refuses private keys outside 1..n-1 or not 64 hex chars", () => {
    const n = "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551";
    for (const bad of ["00".repeat(32), n, "ff".repeat(32), "abcd", `${key.privateKeyHex}00`]) {
      expect(() => publicKeyFromPrivateKey(bad)).toThrow(CryptoError);
      expect(() => portable.publicKeyFromPrivateKey(bad)).toThrow(CryptoError);
    }
  });
});
