import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from "node:crypto";
import { keptBy } from "../kept.js";
import { ecdhWithPrivateKey } from "./p256-keys.js";

// ECDSA P-256 over SHA-256 with node:crypto (OpenSSL): what the portable
// @payments-sandbox/crypto does with @noble/curves, for about a tenth of the CPU.
//
// OpenSSL's nonces are random where noble's are deterministic (RFC 6979), so
// signatures differ byte for byte from the portable signer's; both verify the
// same way. What a client can tell apart is S: the portable signer always
// emitted low S, and a client that verifies with @noble/curves 2.x defaults
// refuses high S, so the server's signatures are normalised to low S too.

/** Order of the P-256 group. */
const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const HALF_N = N >> 1n;

function jwkCoordinates(uncompressed: Buffer): { kty: "EC"; crv: "P-256"; x: string; y: string } {
  return {
    kty: "EC",
    crv: "P-256",
    x: uncompressed.subarray(1, 33).toString("base64url"),
    y: uncompressed.subarray(33, 65).toString("base64url"),
  };
}

export interface SigningKey {
  key: KeyObject;
  /** Uncompressed SEC1 public key. */
  publicKey: Buffer;
}

// Importing a key is the dearest step (~70 µs through JWK, ~400 µs through
// PKCS#8); the keys the server signs with are a handful of platform keys
// (bounded all the same: one or two keys per platform).
const signingKeys = keptBy<SigningKey>(1000);

/** A private key given as 64 hex chars (validated) as a KeyObject, with its public key; cached. */
export function signingKey(privateKeyHex: string): SigningKey {
  return signingKeys(privateKeyHex, () => {
    const publicKey = ecdhWithPrivateKey(privateKeyHex).getPublicKey();
    const key = createPrivateKey({
      key: {
        ...jwkCoordinates(publicKey),
        d: Buffer.from(privateKeyHex, "hex").toString("base64url"),
      },
      format: "jwk",
    });
    return { key, publicKey };
  });
}

// A session key stamps every request of its session, so its KeyObject is
// kept too: the import is most of a stamp's check (~66 µs of ~275).
const verifyingKeys = keptBy<KeyObject>(4096);

/** The KeyObject of a public key given as its uncompressed SEC1 bytes (already validated); cached. */
export function verifyingKey(uncompressed: Buffer): KeyObject {
  return verifyingKeys(uncompressed.toString("hex"), () =>
    createPublicKey({ key: jwkCoordinates(uncompressed), format: "jwk" }),
  );
}

/** r‖s with S moved to the lower half of the group order (the same signature, mirrored). */
function lowS(rs: Buffer): Buffer {
  const s = BigInt(`0x${rs.subarray(32).toString("hex")}`);
  if (s <= HALF_N) return rs;
  const mirrored = Buffer.from((N - s).toString(16).padStart(64, "0"), "hex");
  return Buffer.concat([rs.subarray(0, 32), mirrored]);
}

/** A DER INTEGER of an unsigned big-endian value: minimal, with a 0 byte when the top bit is set. */
function derInteger(unsigned: Buffer): Buffer {
  let start = 0;
  while (start < unsigned.length - 1 && unsigned[start] === 0) start++;
  const value = unsigned.subarray(start);
  const pad = (value[0] as number) & 0x80 ? 1 : 0;
  return Buffer.concat([Buffer.from([0x02, value.length + pad]), Buffer.alloc(pad), value]);
}

/** DER `SEQUENCE { INTEGER r, INTEGER s }` of a raw r‖s signature (at most 72 bytes: short lengths). */
function derSignature(rs: Buffer): Buffer {
  const body = Buffer.concat([derInteger(rs.subarray(0, 32)), derInteger(rs.subarray(32))]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

/** ECDSA P-256 over SHA-256(message) as raw r‖s (64 bytes), low S: JWS ES256. */
export function signCompact(message: Uint8Array, privateKeyHex: string): Buffer {
  const rs = sign("sha256", message, {
    key: signingKey(privateKeyHex).key,
    dsaEncoding: "ieee-p1363",
  });
  return lowS(rs);
}

/** ECDSA P-256 over SHA-256(message), DER-encoded, low S. */
export function signDer(message: Uint8Array, privateKeyHex: string): Buffer {
  return derSignature(signCompact(message, privateKeyHex));
}

/**
 * Verifies a DER signature over SHA-256(message). High S verifies (clients do
 * not normalise it); OpenSSL refuses DER that is not canonical.
 */
export function verifyDer(signature: Uint8Array, message: Uint8Array, key: KeyObject): boolean {
  try {
    return verify("sha256", message, key, signature);
  } catch {
    return false;
  }
}
