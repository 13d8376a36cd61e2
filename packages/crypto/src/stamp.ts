import { signDer, parseDerSignature, verifyDer } from "./ecdsa.js";
import {
  base64urlDecode,
  base64urlEncode,
  bytesToHex,
  hexToBytes,
  isHex,
  utf8,
  utf8Decode,
} from "./encoding.js";
import { StampError } from "./errors.js";
import { parsePublicKey, publicKeyFromPrivateKey } from "./keys.js";

export const STAMP_SCHEME = "SIGNATURE_SCHEME_TK_API_P256";

export interface ParsedStamp {
  /** The public key exactly as sent (compressed or uncompressed hex). */
  publicKey: string;
  scheme: typeof STAMP_SCHEME;
  /** DER signature hex exactly as sent. */
  signature: string;
}

/**
 * Builds the `Service-Wallet-Signature` header value: base64url (no padding)
 * of `{"publicKey","scheme","signature"}`, the same bytes that
 * @turnkey/api-key-stamper emits for the same key and signature.
 */
export function createStamp(payload: string, privateKeyHex: string): string {
  // S is not normalised so that the header is byte-identical to the one the
  // reference pure-JS stamper (@noble/curves 1.x, RFC 6979) makes for the same key.
  const signature = bytesToHex(signDer(utf8(payload), privateKeyHex, { lowS: false }));
  // Field order matches the reference stamper so headers are byte-comparable.
  const stamp = {
    publicKey: publicKeyFromPrivateKey(privateKeyHex, true),
    scheme: STAMP_SCHEME,
    signature,
  };
  return base64urlEncode(JSON.stringify(stamp));
}

function malformed(message: string, cause?: unknown): StampError {
  return new StampError("MALFORMED", message, cause === undefined ? undefined : { cause });
}

/**
 * Decodes a stamp header and checks its structure: base64url JSON with the
 * three members, the P-256 scheme, a public key of 66 or 130 hex chars and a
 * DER ECDSA signature. Does not check that the key is a curve point (that is
 * curve arithmetic: parseStamp does it here, the server with OpenSSL) nor
 * the signature. Throws StampError MALFORMED.
 */
export function decodeStamp(header: string): ParsedStamp {
  if (typeof header !== "string" || header.length === 0) throw malformed("stamp header is empty");

  let json: string;
  try {
    json = utf8Decode(base64urlDecode(header.trim()));
  } catch (cause) {
    throw malformed("stamp header is not base64url-encoded UTF-8", cause);
  }

  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (cause) {
    throw malformed("stamp is not valid JSON", cause);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw malformed("stamp must be a JSON object");
  }

  // Read the members by name: clients emit them in different orders.
  const { publicKey, scheme, signature } = parsed as Record<string, unknown>;
  if (typeof publicKey !== "string") throw malformed("stamp.publicKey must be a string");
  if (typeof scheme !== "string") throw malformed("stamp.scheme must be a string");
  if (typeof signature !== "string") throw malformed("stamp.signature must be a string");
  if (scheme !== STAMP_SCHEME)
    throw malformed(`unsupported stamp scheme ${JSON.stringify(scheme)}`);

  if (!isHex(publicKey) || (publicKey.length !== 66 && publicKey.length !== 130)) {
    throw malformed("stamp.publicKey is not a P-256 public key");
  }
  if (!isHex(signature)) throw malformed("stamp.signature is not hex");
  try {
    parseDerSignature(hexToBytes(signature));
  } catch (cause) {
    throw malformed("stamp.signature is not a DER ECDSA signature", cause);
  }

  return { publicKey, scheme, signature };
}

/**
 * Decodes and structurally validates a stamp header. Throws StampError
 * MALFORMED on anything that is not a well-formed P-256 stamp. Does not check
 * the signature.
 */
export function parseStamp(header: string): ParsedStamp {
  const stamp = decodeStamp(header);
  try {
    parsePublicKey(stamp.publicKey);
  } catch (cause) {
    throw malformed("stamp.publicKey is not a P-256 public key", cause);
  }
  return stamp;
}

/**
 * Verifies a stamp header against the exact payload string that was signed.
 * Accepts high-S signatures and either public key form. Returns the signer's
 * compressed public key (lowercase hex) for credential lookup.
 */
export function verifyStamp(header: string, payload: string): { publicKey: string } {
  const stamp = parseStamp(header);
  if (typeof payload !== "string") throw new StampError("INVALID", "payload must be a string");
  const point = parsePublicKey(stamp.publicKey);
  if (!verifyDer(hexToBytes(stamp.signature), utf8(payload), point)) {
    throw new StampError("INVALID", "stamp signature does not match the payload");
  }
  return { publicKey: point.toHex(true) };
}
