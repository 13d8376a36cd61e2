import { parseDerSignature, signDer, verifyDer } from "./ecdsa.js";
import {
  base64Decode,
  base64Encode,
  bytesToHex,
  concatBytes,
  hexToBytes,
  utf8,
} from "./encoding.js";
import { CryptoError } from "./errors.js";
import { parsePublicKey } from "./keys.js";

// DER of SubjectPublicKeyInfo { AlgorithmIdentifier { id-ecPublicKey,
// prime256v1 }, BIT STRING (0 unused bits) } up to the point bytes. For a
// fixed curve and point length every byte is constant, so no ASN.1 encoder
// (and no node:crypto, unavailable in browsers) is needed.
const SPKI_PREFIX_UNCOMPRESSED = hexToBytes("3059301306072a8648ce3d020106082a8648ce3d030107034200");
const SPKI_PREFIX_COMPRESSED = hexToBytes("3039301306072a8648ce3d020106082a8648ce3d030107032200");

/** Version tag of the webhook signature header. */
export const WEBHOOK_SIGNATURE_VERSION = "1";

function bodyBytes(rawBody: string | Uint8Array): Uint8Array {
  return typeof rawBody === "string" ? utf8(rawBody) : rawBody;
}

/**
 * Header value `{"v":"1","s":"<base64 DER ECDSA P-256 over SHA-256(body)>"}`.
 * Sign the exact bytes that go on the wire: re-serialising JSON breaks it.
 */
export function signWebhookBody(rawBody: string | Uint8Array, privateKeyHex: string): string {
  const signature = signDer(bodyBytes(rawBody), privateKeyHex);
  return JSON.stringify({ v: WEBHOOK_SIGNATURE_VERSION, s: base64Encode(signature) });
}

/** PEM ("PUBLIC KEY") of the SPKI DER for a P-256 key given in either form. */
export function publicKeyToSpkiPem(publicKeyHex: string): string {
  const der = concatBytes(SPKI_PREFIX_UNCOMPRESSED, parsePublicKey(publicKeyHex).toBytes(false));
  const lines = base64Encode(der).match(/.{1,64}/g) ?? [];
  // Same layout as OpenSSL / node's KeyObject.export(): 64-char lines, trailing newline.
  return `-----BEGIN PUBLIC KEY-----\n${lines.join("\n")}\n-----END PUBLIC KEY-----\n`;
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  return bytes.length >= prefix.length && prefix.every((b, i) => bytes[i] === b);
}

/**
 * Inverse of publicKeyToSpkiPem: the compressed public key hex of a P-256
 * SPKI PEM (uncompressed or compressed point). Throws CryptoError otherwise.
 */
export function spkiPemToPublicKeyHex(pem: string): string {
  const match = /-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\s]+)-----END PUBLIC KEY-----/.exec(pem);
  if (!match?.[1]) throw new CryptoError("not a PEM PUBLIC KEY");
  const der = base64Decode(match[1].replace(/\s+/g, ""));
  for (const prefix of [SPKI_PREFIX_UNCOMPRESSED, SPKI_PREFIX_COMPRESSED]) {
    const pointLength = prefix === SPKI_PREFIX_UNCOMPRESSED ? 65 : 33;
    if (startsWith(der, prefix) && der.length === prefix.length + pointLength) {
      return parsePublicKey(bytesToHex(der.subarray(prefix.length))).toHex(true);
    }
  }
  throw new CryptoError("PEM is not a P-256 SubjectPublicKeyInfo");
}

/**
 * Checks a webhook signature header against the raw body and the platform's
 * SPKI PEM key. Returns false for any malformed input instead of throwing, so
 * receivers have one failure path.
 */
export function verifyWebhookSignature(
  rawBody: string | Uint8Array,
  headerValue: string,
  publicKeySpkiPem: string,
): boolean {
  try {
    const header: unknown = JSON.parse(headerValue);
    if (typeof header !== "object" || header === null) return false;
    const { v, s } = header as Record<string, unknown>;
    if (v !== WEBHOOK_SIGNATURE_VERSION || typeof s !== "string") return false;
    const signature = parseDerSignature(base64Decode(s));
    const key = parsePublicKey(spkiPemToPublicKeyHex(publicKeySpkiPem));
    return verifyDer(signature, bodyBytes(rawBody), key);
  } catch {
    return false;
  }
}
