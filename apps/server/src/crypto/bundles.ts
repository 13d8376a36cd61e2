import {
  CryptoError,
  decodeEncryptedOtpBundle,
  decodeOtpPayload,
  encodeOtpTargetBundle,
  encodeSessionKeyBundle,
  type P256KeyPair,
} from "@payments-sandbox/crypto";
import { signDer, signingKey } from "./ecdsa.js";
import { hpkeOpen, hpkeSeal } from "./hpke.js";
import {
  compressPoint,
  ecdhWithPrivateKey,
  generateP256KeyPair,
  uncompressPublicKey,
} from "./p256-keys.js";

// The bundles the server makes and opens, in @payments-sandbox/crypto's encodings
// (shared with clients), with node:crypto's signatures and HPKE.

/**
 * The signed OTP target bundle (`otpEncryptionTargetBundle`): data names the
 * target key the client encrypts the code to, signed by the enclave key.
 * `target` is a key pair generateP256KeyPair just made, so its public key
 * needs no checking.
 */
export function createOtpTargetBundle(params: {
  target: P256KeyPair;
  organizationId: string;
  userId: string;
  signingPrivateKeyHex: string;
}): string {
  return encodeOtpTargetBundle(
    {
      targetPublic: params.target.publicKeyUncompressedHex,
      organizationId: params.organizationId,
      userId: params.userId,
    },
    signingKey(params.signingPrivateKeyHex).publicKey.toString("hex"),
    (dataBytes) => signDer(dataBytes, params.signingPrivateKeyHex),
  );
}

/** A new code's target: a fresh key pair, and its bundle signed by the enclave key. */
export interface OtpTarget {
  privateKeyHex: string;
  bundle: string;
}

export function newOtpTarget(
  organizationId: string,
  userId: string,
  enclaveKeyHex: string,
): OtpTarget {
  const target = generateP256KeyPair();
  const bundle = createOtpTargetBundle({
    target,
    organizationId,
    userId,
    signingPrivateKeyHex: enclaveKeyHex,
  });
  return { privateKeyHex: target.privateKeyHex, bundle };
}

/**
 * Opens an `encryptedOtpBundle` with the target private key. Returns the code
 * and the client's TEK as the client sent it (checked to be a P-256 point).
 * Throws CryptoError on anything that does not open.
 */
export function openOtpBundle(
  bundle: string,
  targetPrivateKeyHex: string,
): { otpCode: string; publicKey: string } {
  const sealed = decodeEncryptedOtpBundle(bundle);
  const plaintext = hpkeOpen({ ...sealed, recipientPrivateKeyHex: targetPrivateKeyHex });
  const payload = decodeOtpPayload(plaintext);
  try {
    uncompressPublicKey(payload.publicKey);
  } catch (cause) {
    throw new CryptoError("decrypted OTP payload public_key is not a P-256 public key", { cause });
  }
  return payload;
}

/**
 * Seals a raw 32-byte session private key to the client's public key
 * (`encryptedSessionSigningKey`), the format @turnkey/crypto's
 * decryptCredentialBundle reads.
 */
export function sealSessionKeyBundle(
  sessionPrivateKeyHex: string,
  recipientPublicKeyHex: string,
): string {
  ecdhWithPrivateKey(sessionPrivateKeyHex);
  const plaintext = Buffer.from(sessionPrivateKeyHex, "hex");
  const { encappedPublic, ciphertext } = hpkeSeal(plaintext, recipientPublicKeyHex);
  return encodeSessionKeyBundle(compressPoint(encappedPublic), ciphertext);
}
