import {
  STAMP_SCHEME,
  StampError,
  base64urlEncode,
  decodeStamp,
  type ParsedStamp,
} from "@payments-sandbox/crypto";
import { signDer, verifyDer, verifyingKey } from "./ecdsa.js";
import { compressPoint, publicKeyFromPrivateKey, uncompressedPoint } from "./p256-keys.js";

// Wallet stamps (`Service-Wallet-Signature`) on the server: the header is
// decoded by @payments-sandbox/crypto's decodeStamp, shared with every client; the
// curve work (is the key a point, does the signature verify) is OpenSSL's.
// Errors are the portable verifier's: StampError MALFORMED for a header that
// is not a well-formed P-256 stamp, INVALID for a signature that does not
// verify over the payload.

export interface ReadStamp extends ParsedStamp {
  /** The signer's key, uncompressed SEC1 bytes. */
  point: Buffer;
}

/** Decodes a stamp header and checks its key is a P-256 point; does not check the signature. */
export function readStamp(header: string): ReadStamp {
  return withPoint(decodeStamp(header));
}

/** A decoded stamp with its key's point: StampError MALFORMED when the key is not one. */
function withPoint(stamp: ParsedStamp | ReadStamp): ReadStamp {
  if ("point" in stamp) return stamp;
  try {
    return { ...stamp, point: uncompressedPoint(stamp.publicKey) };
  } catch (cause) {
    throw new StampError("MALFORMED", "stamp.publicKey is not a P-256 public key", { cause });
  }
}

/**
 * Verifies a stamp over the exact payload string that was signed: a header,
 * or one already decoded by decodeStamp (whose key is checked here, as
 * readStamp does). Accepts high-S signatures and either key form. Returns
 * the signer's compressed public key (lowercase hex) for credential lookup.
 */
export function verifyStamp(
  stamp: string | ParsedStamp | ReadStamp,
  payload: string,
): { publicKey: string } {
  const read = typeof stamp === "string" ? readStamp(stamp) : withPoint(stamp);
  if (typeof payload !== "string") throw new StampError("INVALID", "payload must be a string");
  const signature = Buffer.from(read.signature, "hex");
  if (!verifyDer(signature, Buffer.from(payload, "utf8"), verifyingKey(read.point))) {
    throw new StampError("INVALID", "stamp signature does not match the payload");
  }
  // Clients send compressed keys, already the canonical form.
  const compressed =
    read.publicKey.length === 66
      ? read.publicKey.toLowerCase()
      : compressPoint(read.point).toString("hex");
  return { publicKey: compressed };
}

/**
 * A stamp made on the server, with a key the sandbox keeps (a delegated key):
 * the same header a client makes, with OpenSSL's signer.
 */
export function serverStamp(payload: string, privateKeyHex: string): string {
  const signature = signDer(Buffer.from(payload, "utf8"), privateKeyHex).toString("hex");
  const stamp = {
    publicKey: publicKeyFromPrivateKey(privateKeyHex, true),
    scheme: STAMP_SCHEME,
    signature,
  };
  return base64urlEncode(JSON.stringify(stamp));
}
