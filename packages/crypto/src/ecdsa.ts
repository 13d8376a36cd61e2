import { p256 } from "@noble/curves/nist.js";
import { CryptoError } from "./errors.js";
import { parsePrivateKey } from "./keys.js";

type P256Point = ReturnType<typeof p256.Point.fromBytes>;

/**
 * ECDSA P-256 over SHA-256(message), DER-encoded, deterministic (RFC 6979).
 * noble hashes the message itself (`prehash`), so callers pass the raw signed
 * bytes. S is normalised to the low half unless `lowS: false` is passed
 * (stamps do that to match the reference stamper); verifiers accept both.
 */
export function signDer(
  message: Uint8Array,
  privateKeyHex: string,
  opts: { lowS?: boolean } = {},
): Uint8Array {
  return p256.sign(message, parsePrivateKey(privateKeyHex), {
    prehash: true,
    format: "der",
    lowS: opts.lowS ?? true,
  });
}

/** ECDSA P-256 over SHA-256(message) as raw r||s (64 bytes), as JWS ES256 needs. */
export function signCompact(message: Uint8Array, privateKeyHex: string): Uint8Array {
  return p256.sign(message, parsePrivateKey(privateKeyHex), { prehash: true, format: "compact" });
}

/**
 * Parses a DER signature, rejecting trailing bytes and r/s outside 1..n-1.
 * Returns the canonical DER bytes.
 */
export function parseDerSignature(der: Uint8Array): Uint8Array {
  try {
    return p256.Signature.fromBytes(der, "der").toBytes("der");
  } catch (cause) {
    throw new CryptoError("signature is not a valid DER ECDSA signature", { cause });
  }
}

// Clients (OpenSSL, WebCrypto) do not normalise S, so high-S must verify:
// hence lowS: false everywhere below.
export function verifyDer(
  signature: Uint8Array,
  message: Uint8Array,
  publicKey: P256Point,
): boolean {
  try {
    return p256.verify(signature, message, publicKey.toBytes(false), {
      prehash: true,
      lowS: false,
      format: "der",
    });
  } catch {
    return false;
  }
}

export function verifyCompact(
  signature: Uint8Array,
  message: Uint8Array,
  publicKey: P256Point,
): boolean {
  if (signature.length !== 64) return false;
  try {
    return p256.verify(signature, message, publicKey.toBytes(false), {
      prehash: true,
      lowS: false,
      format: "compact",
    });
  } catch {
    return false;
  }
}
