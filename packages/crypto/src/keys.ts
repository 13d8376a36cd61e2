import { p256 } from "@noble/curves/nist.js";
import { bytesToHex, hexToBytes, isHex } from "./encoding.js";
import { CryptoError } from "./errors.js";

type P256Point = ReturnType<typeof p256.Point.fromBytes>;

export interface P256KeyPair {
  /** 32-byte scalar, 64 lowercase hex chars. */
  privateKeyHex: string;
  /** Compressed SEC1 point, 66 lowercase hex chars (02/03 prefix). */
  publicKeyHex: string;
  /** Uncompressed SEC1 point, 130 lowercase hex chars (04 prefix). */
  publicKeyUncompressedHex: string;
}

export type PublicKeyForm = "compressed" | "uncompressed";

const HEX_LENGTH: Record<PublicKeyForm, number> = { compressed: 66, uncompressed: 130 };

/**
 * Parses a SEC1 public key (compressed or uncompressed hex) into a curve
 * point. noble checks that the point is on the curve and not the identity.
 */
export function parsePublicKey(hex: string): P256Point {
  if (!isHex(hex) || (hex.length !== 66 && hex.length !== 130)) {
    throw new CryptoError("public key must be 66 (compressed) or 130 (uncompressed) hex chars");
  }
  try {
    return p256.Point.fromBytes(hexToBytes(hex));
  } catch (cause) {
    throw new CryptoError("public key is not a valid P-256 point", { cause });
  }
}

/** Parses a 32-byte private key and checks it is a valid scalar (1..n-1). */
export function parsePrivateKey(hex: string): Uint8Array {
  if (!isHex(hex) || hex.length !== 64) {
    throw new CryptoError("private key must be 64 hex chars");
  }
  const bytes = hexToBytes(hex);
  if (!p256.utils.isValidSecretKey(bytes)) {
    throw new CryptoError("private key is out of range for P-256");
  }
  return bytes;
}

/** Fresh P-256 key pair from the platform CSPRNG (via noble). */
export function generateP256KeyPair(): P256KeyPair {
  const secretKey = p256.utils.randomSecretKey();
  const point = p256.Point.fromBytes(p256.getPublicKey(secretKey, true));
  return {
    privateKeyHex: bytesToHex(secretKey),
    publicKeyHex: point.toHex(true),
    publicKeyUncompressedHex: point.toHex(false),
  };
}

/** Public key of a private key, compressed (default) or uncompressed hex. */
export function publicKeyFromPrivateKey(privateKeyHex: string, compressed = true): string {
  return bytesToHex(p256.getPublicKey(parsePrivateKey(privateKeyHex), compressed));
}

/** Compressed hex of a public key given in either form. */
export function compressPublicKey(hex: string): string {
  return parsePublicKey(hex).toHex(true);
}

/** Uncompressed hex of a public key given in either form. */
export function uncompressPublicKey(hex: string): string {
  return parsePublicKey(hex).toHex(false);
}

/**
 * True when `hex` is a P-256 point on the curve; with `form`, it must also be
 * encoded in that form. Never throws.
 */
export function isValidP256PublicKeyHex(hex: unknown, form?: PublicKeyForm): boolean {
  if (typeof hex !== "string") return false;
  if (form !== undefined && hex.length !== HEX_LENGTH[form]) return false;
  try {
    parsePublicKey(hex);
    return true;
  } catch {
    return false;
  }
}

/**
 * Compares two public keys as curve points, so the compressed and the
 * uncompressed encodings of one key are equal. Invalid keys are never equal.
 */
export function publicKeysEqual(a: string, b: string): boolean {
  try {
    return parsePublicKey(a).equals(parsePublicKey(b));
  } catch {
    return false;
  }
}
