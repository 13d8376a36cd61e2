import { ECDH, createECDH } from "node:crypto";
import { CryptoError, type P256KeyPair, type PublicKeyForm } from "@payments-sandbox/crypto";
import { keptBy } from "../kept.js";

// P-256 keys for the server, with node:crypto (OpenSSL) doing the curve
// arithmetic: the same hex forms as @payments-sandbox/crypto's keys.ts, about ten
// times faster (point decompression alone costs the portable code ~60 µs).

const CURVE = "prime256v1";
const SCALAR_BYTES = 32;
const HEX_LENGTH: Record<PublicKeyForm, number> = { compressed: 66, uncompressed: 130 };
const HEX = /^(?:[0-9a-fA-F]{2})+$/;

/** Left-pads a big-endian scalar: OpenSSL drops leading zero bytes (1 key in 256). */
export function scalarBytes(value: Buffer): Buffer {
  if (value.length === SCALAR_BYTES) return value;
  return Buffer.concat([Buffer.alloc(SCALAR_BYTES - value.length), value]);
}

// A login reads the same few keys several times (the session key in its
// bundle, its stamp and its challenge; the enclave's key): each is checked
// and converted once, so a point is kept from its first read. Bounded, and
// only valid points are kept; callers get copies, so none can alter what the
// next one reads.
const points = keptBy<Buffer>(4096, { keepFirst: true });

/**
 * Decodes a SEC1 public key (compressed `02`/`03` or uncompressed `04`, hex)
 * to its uncompressed bytes, checking that it is a point on P-256. The prefix
 * is checked here because OpenSSL also accepts the hybrid `06`/`07` form,
 * which the portable code and the reference clients refuse.
 */
export function uncompressedPoint(hex: string): Buffer {
  const length = typeof hex === "string" ? hex.length : 0;
  const form = length === 66 ? "compressed" : length === 130 ? "uncompressed" : undefined;
  if (form === undefined || !HEX.test(hex)) {
    throw new CryptoError("public key must be 66 (compressed) or 130 (uncompressed) hex chars");
  }
  const prefix = hex.slice(0, 2);
  if (form === "compressed" ? prefix !== "02" && prefix !== "03" : prefix !== "04") {
    throw new CryptoError("public key is not a valid P-256 point");
  }
  const point = points(hex, () => {
    try {
      // OpenSSL rejects points off the curve and x coordinates with no square root.
      return ECDH.convertKey(hex, CURVE, "hex", undefined, "uncompressed") as Buffer;
    } catch (cause) {
      throw new CryptoError("public key is not a valid P-256 point", { cause });
    }
  });
  return Buffer.from(point);
}

/** Compressed bytes of an uncompressed point that uncompressedPoint returned. */
export function compressPoint(uncompressed: Buffer): Buffer {
  return ECDH.convertKey(uncompressed, CURVE, undefined, undefined, "compressed") as Buffer;
}

/** Compressed hex of a public key given in either form. */
export function compressPublicKey(hex: string): string {
  const point = uncompressedPoint(hex);
  // A valid compressed key is already the canonical compressed form.
  return hex.length === 66 ? hex.toLowerCase() : compressPoint(point).toString("hex");
}

/** Uncompressed hex of a public key given in either form. */
export function uncompressPublicKey(hex: string): string {
  return uncompressedPoint(hex).toString("hex");
}

/**
 * True when `hex` is a P-256 point; with `form`, it must also be encoded in
 * that form. Never throws.
 */
export function isValidP256PublicKeyHex(hex: unknown, form?: PublicKeyForm): boolean {
  if (typeof hex !== "string") return false;
  if (form !== undefined && hex.length !== HEX_LENGTH[form]) return false;
  try {
    uncompressedPoint(hex);
    return true;
  } catch {
    return false;
  }
}

/** Compares two public keys as curve points; invalid keys are never equal. */
export function publicKeysEqual(a: string, b: string): boolean {
  try {
    // The same encoding (in either case) is the same point, if it is one.
    if (typeof a === "string" && typeof b === "string" && a.toLowerCase() === b.toLowerCase()) {
      uncompressedPoint(a);
      return true;
    }
    return uncompressedPoint(a).equals(uncompressedPoint(b));
  } catch {
    return false;
  }
}

/**
 * An ECDH object holding a private key given as 64 hex chars; OpenSSL checks
 * that it is a scalar in 1..n-1.
 */
export function ecdhWithPrivateKey(privateKeyHex: string): ECDH {
  if (
    typeof privateKeyHex !== "string" ||
    privateKeyHex.length !== 64 ||
    !HEX.test(privateKeyHex)
  ) {
    throw new CryptoError("private key must be 64 hex chars");
  }
  const ecdh = createECDH(CURVE);
  try {
    ecdh.setPrivateKey(privateKeyHex, "hex");
  } catch (cause) {
    throw new CryptoError("private key is out of range for P-256", { cause });
  }
  return ecdh;
}

/** Public key of a private key, compressed (default) or uncompressed hex. */
export function publicKeyFromPrivateKey(privateKeyHex: string, compressed = true): string {
  return ecdhWithPrivateKey(privateKeyHex).getPublicKey(
    "hex",
    compressed ? "compressed" : "uncompressed",
  );
}

/** A fresh key pair from OpenSSL's CSPRNG, in @payments-sandbox/crypto's P256KeyPair shape. */
export function generateP256KeyPair(): P256KeyPair {
  const ecdh = createECDH(CURVE);
  ecdh.generateKeys();
  return {
    privateKeyHex: scalarBytes(ecdh.getPrivateKey()).toString("hex"),
    publicKeyHex: ecdh.getPublicKey("hex", "compressed"),
    publicKeyUncompressedHex: ecdh.getPublicKey("hex", "uncompressed"),
  };
}
