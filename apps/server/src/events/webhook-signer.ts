import { createPrivateKey, sign, type KeyObject } from "node:crypto";
import { WEBHOOK_SIGNATURE_VERSION } from "@payments-sandbox/crypto";
import { keptBy } from "../kept.js";

// The server's webhook signer: the same header as @payments-sandbox/crypto's
// signWebhookBody (`{"v":"1","s":"<base64 DER ECDSA P-256 over SHA-256(body)>"}`),
// made with node:crypto (OpenSSL), about 25 times faster than the portable
// implementation; the dispatcher signs every delivery. OpenSSL's nonces are
// random rather than RFC 6979's, which receivers cannot tell apart.

// PKCS#8 PrivateKeyInfo { version 0, AlgorithmIdentifier { id-ecPublicKey,
// prime256v1 }, OCTET STRING { ECPrivateKey { version 1, OCTET STRING (32) } } }
// up to the private scalar: constant for a P-256 key, and OpenSSL derives the
// public key itself.
const PKCS8_PREFIX = Buffer.from(
  "308141020100301306072a8648ce3d020106082a8648ce3d030107042730250201010420",
  "hex",
);

// One key per platform; bounded all the same.
const keys = keptBy<KeyObject>(1000);

function keyObject(privateKeyHex: string): KeyObject {
  return keys(privateKeyHex, () => {
    const scalar = Buffer.from(privateKeyHex, "hex");
    if (scalar.length !== 32) throw new Error("a webhook key is a 32-byte P-256 scalar");
    return createPrivateKey({
      key: Buffer.concat([PKCS8_PREFIX, scalar]),
      format: "der",
      type: "pkcs8",
    });
  });
}

/** The X-Grid-Signature header value for these exact body bytes. */
export function webhookSignature(rawBody: string, privateKeyHex: string): string {
  const der = sign("sha256", Buffer.from(rawBody, "utf8"), keyObject(privateKeyHex));
  return JSON.stringify({ v: WEBHOOK_SIGNATURE_VERSION, s: der.toString("base64") });
}
