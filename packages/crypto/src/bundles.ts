import { p256 } from "@noble/curves/nist.js";
import bs58check from "bs58check";
import { parseDerSignature, signDer, verifyDer } from "./ecdsa.js";
import { bytesToHex, concatBytes, hexToBytes, isHex, utf8, utf8Decode } from "./encoding.js";
import { CryptoError } from "./errors.js";
import { hpkeOpen, hpkeSeal } from "./hpke.js";
import { parsePrivateKey, parsePublicKey, publicKeyFromPrivateKey } from "./keys.js";

// ---------------------------------------------------------------------------
// Session key bundle (`encryptedSessionSigningKey`)
// ---------------------------------------------------------------------------

const COMPRESSED_KEY_BYTES = 33;
// 32-byte key + 16-byte AES-GCM tag.
const SESSION_CIPHERTEXT_BYTES = 48;
const SESSION_BUNDLE_BYTES = COMPRESSED_KEY_BYTES + SESSION_CIPHERTEXT_BYTES;

/**
 * Seals a raw 32-byte session private key to the client's public key:
 * base58check(compressed encapped key (33) || ciphertext+tag (48)), the
 * format @turnkey/crypto's decryptCredentialBundle reads.
 */
export async function sealSessionKeyBundle(
  sessionPrivateKeyHex: string,
  recipientPublicKeyHex: string,
): Promise<string> {
  const plaintext = parsePrivateKey(sessionPrivateKeyHex);
  const { encappedPublic, ciphertext } = await hpkeSeal({ plaintext, recipientPublicKeyHex });
  return encodeSessionKeyBundle(p256.Point.fromBytes(encappedPublic).toBytes(true), ciphertext);
}

/**
 * The bundle's encoding around a seal made elsewhere (the server seals with
 * node:crypto): base58check(compressed encapped key (33) || ciphertext+tag (48)).
 */
export function encodeSessionKeyBundle(
  compressedEncappedPublic: Uint8Array,
  ciphertext: Uint8Array,
): string {
  if (compressedEncappedPublic.length !== COMPRESSED_KEY_BYTES) {
    throw new CryptoError(`encapped key must be ${COMPRESSED_KEY_BYTES} bytes (compressed)`);
  }
  if (ciphertext.length !== SESSION_CIPHERTEXT_BYTES) {
    throw new CryptoError(`session key ciphertext must be ${SESSION_CIPHERTEXT_BYTES} bytes`);
  }
  return bs58check.encode(concatBytes(compressedEncappedPublic, ciphertext));
}

/** Splits a session key bundle into its compressed encapped key and ciphertext, unopened. */
export function decodeSessionKeyBundle(bundle: string): {
  encappedPublic: Uint8Array;
  ciphertext: Uint8Array;
} {
  let payload: Uint8Array;
  try {
    payload = bs58check.decode(bundle);
  } catch (cause) {
    throw new CryptoError("session key bundle is not valid base58check", { cause });
  }
  if (payload.length !== SESSION_BUNDLE_BYTES) {
    throw new CryptoError(
      `session key bundle must be ${SESSION_BUNDLE_BYTES} bytes, got ${payload.length}`,
    );
  }
  return {
    encappedPublic: payload.subarray(0, COMPRESSED_KEY_BYTES),
    ciphertext: payload.subarray(COMPRESSED_KEY_BYTES),
  };
}

/** Opens a session key bundle; returns the 32-byte private key as hex. */
export async function openSessionKeyBundle(
  bundle: string,
  recipientPrivateKeyHex: string,
): Promise<string> {
  const plaintext = await hpkeOpen({
    ...decodeSessionKeyBundle(bundle),
    recipientPrivateKeyHex,
  });
  return bytesToHex(plaintext);
}

// ---------------------------------------------------------------------------
// OTP target bundle (`otpEncryptionTargetBundle`)
// ---------------------------------------------------------------------------

export const OTP_TARGET_BUNDLE_VERSION = "v1.0.0";

export interface OtpTargetData {
  /** Uncompressed P-256 public key hex (130 chars) the client encrypts to. */
  targetPublic: string;
  organizationId: string;
  userId: string;
}

function parseJsonObject(text: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new CryptoError(`${what} is not valid JSON`, { cause });
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new CryptoError(`${what} must be a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

function requireString(obj: Record<string, unknown>, key: string, what: string): string {
  const value = obj[key];
  if (typeof value !== "string") throw new CryptoError(`${what} is missing string "${key}"`);
  return value;
}

/**
 * Builds the signed OTP target bundle. `data` is the hex of the UTF-8 JSON
 * {targetPublic, organizationId, userId}; `dataSignature` is DER ECDSA-SHA256
 * over those JSON bytes by the enclave key; `enclaveQuorumPublic` is that
 * key's uncompressed hex (the reference client compares it as a string).
 */
export function createOtpTargetBundle(params: {
  targetPublicKeyHex: string;
  organizationId: string;
  userId: string;
  signingPrivateKeyHex: string;
}): string {
  const data: OtpTargetData = {
    targetPublic: parsePublicKey(params.targetPublicKeyHex).toHex(false),
    organizationId: params.organizationId,
    userId: params.userId,
  };
  return encodeOtpTargetBundle(
    data,
    publicKeyFromPrivateKey(params.signingPrivateKeyHex, false),
    (dataBytes) => signDer(dataBytes, params.signingPrivateKeyHex),
  );
}

/**
 * The bundle's encoding around a signature made elsewhere (the server signs
 * with node:crypto). `data.targetPublic` and `enclavePublicKeyHex` must be
 * uncompressed hex already; `sign` returns the DER signature of the bytes.
 */
export function encodeOtpTargetBundle(
  data: OtpTargetData,
  enclavePublicKeyHex: string,
  sign: (dataBytes: Uint8Array) => Uint8Array,
): string {
  // Members in this order: the data is signed as these exact bytes.
  const dataBytes = utf8(
    JSON.stringify({
      targetPublic: data.targetPublic,
      organizationId: data.organizationId,
      userId: data.userId,
    }),
  );
  return JSON.stringify({
    version: OTP_TARGET_BUNDLE_VERSION,
    data: bytesToHex(dataBytes),
    dataSignature: bytesToHex(sign(dataBytes)),
    enclaveQuorumPublic: enclavePublicKeyHex,
  });
}

/**
 * Checks an OTP target bundle: the signer must be the expected enclave key
 * (compared as points) and the signature must cover `data`. Returns the
 * decoded data.
 */
export function verifyOtpTargetBundle(
  bundle: string,
  expectedEnclavePublicKeyHex: string,
): OtpTargetData {
  const expected = parsePublicKey(expectedEnclavePublicKeyHex);
  const outer = parseJsonObject(bundle, "OTP target bundle");
  const version = requireString(outer, "version", "OTP target bundle");
  if (version !== OTP_TARGET_BUNDLE_VERSION) {
    throw new CryptoError(`unsupported OTP target bundle version ${JSON.stringify(version)}`);
  }
  const dataHex = requireString(outer, "data", "OTP target bundle");
  const signatureHex = requireString(outer, "dataSignature", "OTP target bundle");
  const signerHex = requireString(outer, "enclaveQuorumPublic", "OTP target bundle");

  const signer = parsePublicKey(signerHex);
  if (!signer.equals(expected)) {
    throw new CryptoError("OTP target bundle is signed by an unexpected key");
  }
  if (!isHex(dataHex)) throw new CryptoError("OTP target bundle data is not hex");
  if (!isHex(signatureHex)) throw new CryptoError("OTP target bundle signature is not hex");
  const dataBytes = hexToBytes(dataHex);
  const signature = parseDerSignature(hexToBytes(signatureHex));
  if (!verifyDer(signature, dataBytes, expected)) {
    throw new CryptoError("OTP target bundle signature is invalid");
  }

  const data = parseJsonObject(utf8Decode(dataBytes), "OTP target bundle data");
  const targetPublic = requireString(data, "targetPublic", "OTP target bundle data");
  if (targetPublic.length !== 130) {
    throw new CryptoError("OTP target bundle targetPublic must be an uncompressed key");
  }
  parsePublicKey(targetPublic);
  return {
    targetPublic,
    organizationId: requireString(data, "organizationId", "OTP target bundle data"),
    userId: requireString(data, "userId", "OTP target bundle data"),
  };
}

// ---------------------------------------------------------------------------
// Encrypted OTP bundle (`encryptedOtpBundle`)
// ---------------------------------------------------------------------------

/**
 * Seals {"otp_code","public_key"} to the OTP target key, in the JSON
 * {encappedPublic, ciphertext} (hex) form that encryptOtpCodeToBundle emits.
 * Used by test clients; the server only opens these.
 */
export async function sealOtpBundle(params: {
  otpCode: string;
  tekPublicKeyHex: string;
  targetPublicKeyHex: string;
}): Promise<string> {
  parsePublicKey(params.tekPublicKeyHex);
  const plaintext = utf8(
    JSON.stringify({ otp_code: params.otpCode, public_key: params.tekPublicKeyHex }),
  );
  const { encappedPublic, ciphertext } = await hpkeSeal({
    plaintext,
    recipientPublicKeyHex: params.targetPublicKeyHex,
  });
  return JSON.stringify({
    encappedPublic: bytesToHex(encappedPublic),
    ciphertext: bytesToHex(ciphertext),
  });
}

/**
 * Decodes an encrypted OTP bundle's JSON {encappedPublic, ciphertext} (hex)
 * without opening it (the server opens with node:crypto).
 */
export function decodeEncryptedOtpBundle(bundle: string): {
  encappedPublic: Uint8Array;
  ciphertext: Uint8Array;
} {
  const outer = parseJsonObject(bundle, "encrypted OTP bundle");
  const encappedHex = requireString(outer, "encappedPublic", "encrypted OTP bundle");
  const ciphertextHex = requireString(outer, "ciphertext", "encrypted OTP bundle");
  if (!isHex(encappedHex)) throw new CryptoError("encrypted OTP bundle encappedPublic is not hex");
  if (!isHex(ciphertextHex)) throw new CryptoError("encrypted OTP bundle ciphertext is not hex");
  return { encappedPublic: hexToBytes(encappedHex), ciphertext: hexToBytes(ciphertextHex) };
}

/**
 * Reads the opened payload {"otp_code","public_key"}. The key is returned as
 * sent; the caller checks that it is a curve point.
 */
export function decodeOtpPayload(plaintext: Uint8Array): { otpCode: string; publicKey: string } {
  const inner = parseJsonObject(utf8Decode(plaintext), "decrypted OTP payload");
  return {
    otpCode: requireString(inner, "otp_code", "decrypted OTP payload"),
    publicKey: requireString(inner, "public_key", "decrypted OTP payload"),
  };
}

/**
 * Opens an encrypted OTP bundle with the target private key. Returns the
 * code and the client's TEK exactly as the client sent it (compressed or
 * uncompressed; it is checked to be a valid P-256 key).
 */
export async function openOtpBundle(
  bundle: string,
  targetPrivateKeyHex: string,
): Promise<{ otpCode: string; publicKey: string }> {
  const sealed = decodeEncryptedOtpBundle(bundle);
  const plaintext = await hpkeOpen({ ...sealed, recipientPrivateKeyHex: targetPrivateKeyHex });
  const payload = decodeOtpPayload(plaintext);
  try {
    parsePublicKey(payload.publicKey);
  } catch (cause) {
    throw new CryptoError("decrypted OTP payload public_key is not a P-256 public key", { cause });
  }
  return payload;
}
