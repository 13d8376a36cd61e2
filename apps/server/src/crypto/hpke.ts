import {
  createCipheriv,
  createDecipheriv,
  createECDH,
  createHmac,
  hkdfSync,
  type ECDH,
} from "node:crypto";
import { CryptoError, HPKE_INFO } from "@payments-sandbox/crypto";
import { keptBy } from "../kept.js";
import { ecdhWithPrivateKey, uncompressedPoint } from "./p256-keys.js";

// HPKE (RFC 9180) in base mode for the one suite the service uses:
// DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-256-GCM; one message per
// context (sequence number 0). Composed of node:crypto's ECDH, HMAC, HKDF and
// AES-GCM, which costs about a tenth of @hpke/core on WebCrypto (that stays in
// @payments-sandbox/crypto for browsers and clients). Tested against the RFC's test
// vectors for this suite and against @hpke/core in both directions.
//
// HKDF-Expand is never needed on its own here: every LabeledExpand in base
// mode expands the output of a LabeledExtract used for nothing else, and that
// pair is exactly one HKDF (extract, then expand), which is what hkdfSync
// computes. The two lone LabeledExtracts (psk_id_hash, info_hash) are
// HKDF-Extract, which RFC 5869 defines as HMAC keyed with the salt.

const CURVE = "prime256v1";
const u16 = (value: number) => Buffer.from([value >> 8, value & 0xff]);

const KEM_ID = 0x0010;
const KDF_ID = 0x0001;
const AEAD_ID = 0x0002;
const KEM_SUITE = Buffer.concat([Buffer.from("KEM"), u16(KEM_ID)]);
const HPKE_SUITE = Buffer.concat([Buffer.from("HPKE"), u16(KEM_ID), u16(KDF_ID), u16(AEAD_ID)]);
const VERSION_LABEL = Buffer.from("HPKE-v1");
const MODE_BASE = Buffer.from([0x00]);
const EMPTY = Buffer.alloc(0);

const N_SECRET = 32;
const N_K = 32;
const N_N = 12;
const N_T = 16;

function labeledIkm(suite: Buffer, label: string, ikm: Buffer): Buffer {
  return Buffer.concat([VERSION_LABEL, suite, Buffer.from(label), ikm]);
}

function labeledInfo(suite: Buffer, label: string, info: Buffer, length: number): Buffer {
  return Buffer.concat([u16(length), VERSION_LABEL, suite, Buffer.from(label), info]);
}

/** LabeledExtract(salt, label, ikm) on its own: HKDF-Extract, i.e. HMAC keyed with the salt. */
function labeledExtract(suite: Buffer, salt: Buffer, label: string, ikm: Buffer): Buffer {
  return createHmac("sha256", salt)
    .update(labeledIkm(suite, label, ikm))
    .digest();
}

/** LabeledExpand(LabeledExtract(salt, extractLabel, ikm), expandLabel, info, length): one HKDF. */
function labeledExtractExpand(
  suite: Buffer,
  salt: Buffer,
  extract: { label: string; ikm: Buffer },
  expand: { label: string; info: Buffer; length: number },
): Buffer {
  const ikm = labeledIkm(suite, extract.label, extract.ikm);
  const info = labeledInfo(suite, expand.label, expand.info, expand.length);
  return Buffer.from(hkdfSync("sha256", ikm, salt, info, expand.length));
}

/** DHKEM's ExtractAndExpand(dh, kem_context). */
function kemSharedSecret(dh: Buffer, enc: Buffer, recipientPublic: Buffer): Buffer {
  return labeledExtractExpand(
    KEM_SUITE,
    EMPTY,
    { label: "eae_prk", ikm: dh },
    { label: "shared_secret", info: Buffer.concat([enc, recipientPublic]), length: N_SECRET },
  );
}

// Base mode has no PSK: psk_id_hash is a constant.
const PSK_ID_HASH = labeledExtract(HPKE_SUITE, EMPTY, "psk_id_hash", EMPTY);
const infoHashes = keptBy<Buffer>(16);

function infoHash(info: Buffer): Buffer {
  return infoHashes(info.toString("hex"), () =>
    labeledExtract(HPKE_SUITE, EMPTY, "info_hash", info),
  );
}

export interface HpkeKeys {
  sharedSecret: Buffer;
  key: Buffer;
  baseNonce: Buffer;
}

/** KeySchedule(mode_base, shared_secret, info, psk = "", psk_id = "") without the exporter secret. */
function keySchedule(sharedSecret: Buffer, info: Buffer): HpkeKeys {
  const context = Buffer.concat([MODE_BASE, PSK_ID_HASH, infoHash(info)]);
  const secret = { label: "secret", ikm: EMPTY };
  return {
    sharedSecret,
    key: labeledExtractExpand(HPKE_SUITE, sharedSecret, secret, {
      label: "key",
      info: context,
      length: N_K,
    }),
    baseNonce: labeledExtractExpand(HPKE_SUITE, sharedSecret, secret, {
      label: "base_nonce",
      info: context,
      length: N_N,
    }),
  };
}

/**
 * SetupBaseS: encapsulates to `recipientPublic` (uncompressed, 65 bytes, a
 * valid point). `ephemeralPrivateKey` is for known-answer tests only; without
 * it the ephemeral key comes from OpenSSL's CSPRNG.
 */
export function setupBaseSender(
  recipientPublic: Buffer,
  info: Buffer,
  ephemeralPrivateKey?: Buffer,
): HpkeKeys & { enc: Buffer } {
  const ephemeral = createECDH(CURVE);
  if (ephemeralPrivateKey) ephemeral.setPrivateKey(ephemeralPrivateKey);
  else ephemeral.generateKeys();
  const enc = ephemeral.getPublicKey();
  const dh = ephemeral.computeSecret(recipientPublic);
  return { enc, ...keySchedule(kemSharedSecret(dh, enc, recipientPublic), info) };
}

/**
 * SetupBaseR: decapsulates `enc` (uncompressed, 65 bytes) with the
 * recipient's key. OpenSSL refuses an `enc` that is not on the curve.
 */
export function setupBaseRecipient(enc: Buffer, recipient: ECDH, info: Buffer): HpkeKeys {
  const dh = recipient.computeSecret(enc);
  return keySchedule(kemSharedSecret(dh, enc, recipient.getPublicKey()), info);
}

/** Seal with sequence number 0 (the nonce is base_nonce): ciphertext ‖ 16-byte tag. */
export function sealFirst(keys: HpkeKeys, aad: Buffer, plaintext: Uint8Array): Buffer {
  const cipher = createCipheriv("aes-256-gcm", keys.key, keys.baseNonce, { authTagLength: N_T });
  cipher.setAAD(aad);
  return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

/** Open with sequence number 0; throws when the tag does not match. */
export function openFirst(keys: HpkeKeys, aad: Buffer, ciphertext: Uint8Array): Buffer {
  const sealed = Buffer.from(ciphertext.buffer, ciphertext.byteOffset, ciphertext.byteLength);
  if (sealed.length < N_T) throw new Error("ciphertext is shorter than the tag");
  const decipher = createDecipheriv("aes-256-gcm", keys.key, keys.baseNonce, {
    authTagLength: N_T,
  });
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(sealed.length - N_T));
  return Buffer.concat([
    decipher.update(sealed.subarray(0, sealed.length - N_T)),
    decipher.final(),
  ]);
}

// ---------------------------------------------------------------------------
// The service's use: info "turnkey_hpke", aad = enc ‖ recipient public key
// (both uncompressed), exactly as @payments-sandbox/crypto's hpkeSeal/hpkeOpen.
// ---------------------------------------------------------------------------

const INFO = Buffer.from(HPKE_INFO);

export interface HpkeSealed {
  /** Ephemeral sender public key, uncompressed SEC1 (65 bytes). */
  encappedPublic: Buffer;
  /** AES-256-GCM ciphertext with the 16-byte tag appended. */
  ciphertext: Buffer;
}

/** Seals to a recipient key given as hex, compressed or uncompressed. */
export function hpkeSeal(plaintext: Uint8Array, recipientPublicKeyHex: string): HpkeSealed {
  const recipient = uncompressedPoint(recipientPublicKeyHex);
  const keys = setupBaseSender(recipient, INFO);
  const ciphertext = sealFirst(keys, Buffer.concat([keys.enc, recipient]), plaintext);
  return { encappedPublic: keys.enc, ciphertext };
}

/**
 * Opens what hpkeSeal (or @payments-sandbox/crypto's) sealed. `encappedPublic` may be
 * compressed or uncompressed; the aad uses the uncompressed form. Throws
 * CryptoError on a wrong key or any tampering.
 */
export function hpkeOpen(params: {
  encappedPublic: Uint8Array;
  ciphertext: Uint8Array;
  recipientPrivateKeyHex: string;
}): Buffer {
  const recipient = ecdhWithPrivateKey(params.recipientPrivateKeyHex);
  let enc: Buffer = Buffer.from(params.encappedPublic);
  // Senders send it uncompressed; computeSecret checks such a point is on the
  // curve. Any other form is checked and converted first.
  if (enc.length !== 65 || enc[0] !== 0x04) {
    try {
      enc = uncompressedPoint(enc.toString("hex"));
    } catch (cause) {
      throw new CryptoError("encapsulated key is not a valid P-256 point", { cause });
    }
  }
  try {
    const keys = setupBaseRecipient(enc, recipient, INFO);
    return openFirst(keys, Buffer.concat([enc, recipient.getPublicKey()]), params.ciphertext);
  } catch (cause) {
    throw new CryptoError("HPKE decryption failed (wrong key or tampered ciphertext)", { cause });
  }
}
