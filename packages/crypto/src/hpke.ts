import { Aes256Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from "@hpke/core";
import { p256 } from "@noble/curves/nist.js";
import { concatBytes, utf8 } from "./encoding.js";
import { CryptoError } from "./errors.js";
import { parsePrivateKey, parsePublicKey } from "./keys.js";

/** HPKE `info` shared with the reference client library. */
export const HPKE_INFO = "turnkey_hpke";

// Created lazily so that importing this module never touches WebCrypto.
let suite: CipherSuite | undefined;
function getSuite(): CipherSuite {
  suite ??= new CipherSuite({
    kem: new DhkemP256HkdfSha256(),
    kdf: new HkdfSha256(),
    aead: new Aes256Gcm(),
  });
  return suite;
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

export interface HpkeSealed {
  /** Ephemeral sender public key, uncompressed SEC1 (65 bytes). */
  encappedPublic: Uint8Array;
  /** AES-256-GCM ciphertext with the 16-byte tag appended. */
  ciphertext: Uint8Array;
}

/**
 * HPKE base-mode seal (DHKEM P-256 / HKDF-SHA256 / AES-256-GCM) with
 * info "turnkey_hpke" and aad = encapped (65 bytes) || recipient (65 bytes).
 * The recipient key may be given compressed or uncompressed.
 */
export async function hpkeSeal(params: {
  plaintext: Uint8Array;
  recipientPublicKeyHex: string;
}): Promise<HpkeSealed> {
  const recipient = parsePublicKey(params.recipientPublicKeyHex).toBytes(false);
  try {
    const hpke = getSuite();
    const recipientPublicKey = await hpke.kem.deserializePublicKey(recipient);
    // A sender context (rather than one-shot seal) is needed because the aad
    // includes the encapsulated key, which only exists after encapsulation.
    const sender = await hpke.createSenderContext({ recipientPublicKey, info: utf8(HPKE_INFO) });
    const encappedPublic = new Uint8Array(sender.enc);
    const aad = concatBytes(encappedPublic, recipient);
    const ciphertext = new Uint8Array(await sender.seal(params.plaintext, aad));
    return { encappedPublic, ciphertext };
  } catch (cause) {
    throw new CryptoError(`HPKE seal failed (${describe(cause)})`, { cause });
  }
}

/**
 * HPKE base-mode open, the inverse of hpkeSeal. `encappedPublic` may be
 * compressed or uncompressed; the aad always uses the uncompressed form.
 * Throws CryptoError on a wrong key or any tampering.
 */
export async function hpkeOpen(params: {
  encappedPublic: Uint8Array;
  ciphertext: Uint8Array;
  recipientPrivateKeyHex: string;
}): Promise<Uint8Array> {
  const privateKey = parsePrivateKey(params.recipientPrivateKeyHex);
  let encapped: Uint8Array;
  try {
    encapped = p256.Point.fromBytes(params.encappedPublic).toBytes(false);
  } catch (cause) {
    throw new CryptoError("encapsulated key is not a valid P-256 point", { cause });
  }
  const recipientPublic = p256.getPublicKey(privateKey, false);
  try {
    const hpke = getSuite();
    const recipientKey = await hpke.kem.deserializePrivateKey(privateKey);
    const recipient = await hpke.createRecipientContext({
      recipientKey,
      enc: encapped,
      info: utf8(HPKE_INFO),
    });
    const aad = concatBytes(encapped, recipientPublic);
    return new Uint8Array(await recipient.open(params.ciphertext, aad));
  } catch (cause) {
    throw new CryptoError("HPKE decryption failed (wrong key or tampered ciphertext)", { cause });
  }
}
