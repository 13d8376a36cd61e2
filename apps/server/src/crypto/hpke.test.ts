import { ECDH, createECDH } from "node:crypto";
import {
  CryptoError,
  decodeSessionKeyBundle,
  generateP256KeyPair,
  hpkeOpen as portableOpen,
  hpkeSeal as portableSeal,
} from "@payments-sandbox/crypto";
import { describe, expect, it } from "vitest";
import {
  hpkeOpen,
  hpkeSeal,
  openFirst,
  sealFirst,
  setupBaseRecipient,
  setupBaseSender,
} from "./hpke.js";

const hex = (value: string) => Buffer.from(value, "hex");

// RFC 9180's published test vectors (test-vectors.json of the CFRG draft
// repository at commit 5f503c5, the set the RFC's appendix is drawn from):
// mode 0, DHKEM(P-256, HKDF-SHA256) 0x0010, HKDF-SHA256 0x0001, AES-256-GCM
// 0x0002; the first encryption (sequence number 0).
const VECTOR = {
  info: "4f6465206f6e2061204772656369616e2055726e",
  skRm: "317f915db7bc629c48fe765587897e01e282d3e8445f79f27f65d031a88082b2",
  skEm: "90345e3a1d116c1dd39ae76d95ab858c142223a63e44f8f85318cfa91a84858e",
  pkRm: "04abc7e49a4c6b3566d77d0304addc6ed0e98512ffccf505e6a8e3eb25c685136f853148544876de76c0f2ef99cdc3a05ccf5ded7860c7c021238f9e2073d2356c",
  enc: "04c06b4f6bebc7bb495cb797ab753f911aff80aefb86fd8b6fcc35525f3ab5f03e0b21bd31a86c6048af3cb2d98e0d3bf01da5cc4c39ff5370d331a4f1f7d5a4e0",
  sharedSecret: "48893fecd82f7c3456af6a42d8f56325d21e08c10fa81299986aaff54cde7b49",
  key: "ee16802a936d5f544771131900ee6973d0551de9e852ece2ef34bf0d5f9e1d1d",
  baseNonce: "9bc50980832a7b4b58c40161",
  aad: "436f756e742d30",
  pt: "4265617574792069732074727574682c20747275746820626561757479",
  ct: "58c61a45059d0c5704560e9d88b564a8b63f1364b8d1fcb3c4c6ddc1d291742465e902cd216f8908da49f8f96f",
};

// RFC 9180 appendix A.3.1 (the same KEM with AES-128-GCM): the KEM's shared
// secret does not depend on the AEAD.
const A3 = {
  skRm: "f3ce7fdae57e1a310d87f1ebbde6f328be0a99cdbcadf4d6589cf29de4b8ffd2",
  skEm: "4995788ef4b9d6132b249ce59a77281493eb39af373d236a1fe415cb0c2d7beb",
  pkRm: "04fe8c19ce0905191ebc298a9245792531f26f0cece2460639e8bc39cb7f706a826a779b4cf969b8a0e539c7f62fb3d30ad6aa8f80e30f1d128aafd68a2ce72ea0",
  enc: "04a92719c6195d5085104f469a8b9814d5838ff72b60501e2c4466e5e67b325ac98536d7b61a1af4b78e5b7f951c0900be863c403ce65c9bfcb9382657222d18c4",
  sharedSecret: "c0d26aeab536609a572b07695d933b589dcf363ff9d93c93adea537aeabb8cb8",
};

function recipient(privateKeyHex: string) {
  const ecdh = createECDH("prime256v1");
  ecdh.setPrivateKey(hex(privateKeyHex));
  return ecdh;
}

describe("HPKE on node:crypto, RFC 9180 known answers", () => {
  it("derives the vector's enc, shared secret, key and nonce, and seals its ciphertext", () => {
    const sender = setupBaseSender(hex(VECTOR.pkRm), hex(VECTOR.info), hex(VECTOR.skEm));
    expect(sender.enc.toString("hex")).toBe(VECTOR.enc);
    expect(sender.sharedSecret.toString("hex")).toBe(VECTOR.sharedSecret);
    expect(sender.key.toString("hex")).toBe(VECTOR.key);
    expect(sender.baseNonce.toString("hex")).toBe(VECTOR.baseNonce);
    expect(sealFirst(sender, hex(VECTOR.aad), hex(VECTOR.pt)).toString("hex")).toBe(VECTOR.ct);
  });

  it("decapsulates the vector's enc and opens its ciphertext", () => {
    const keys = setupBaseRecipient(hex(VECTOR.enc), recipient(VECTOR.skRm), hex(VECTOR.info));
    expect(keys.sharedSecret.toString("hex")).toBe(VECTOR.sharedSecret);
    expect(keys.key.toString("hex")).toBe(VECTOR.key);
    expect(keys.baseNonce.toString("hex")).toBe(VECTOR.baseNonce);
    expect(openFirst(keys, hex(VECTOR.aad), hex(VECTOR.ct)).toString("hex")).toBe(VECTOR.pt);
  });

  it("computes the KEM shared secret of appendix A.3", () => {
    const sender = setupBaseSender(hex(A3.pkRm), Buffer.alloc(0), hex(A3.skEm));
    expect(sender.enc.toString("hex")).toBe(A3.enc);
    expect(sender.sharedSecret.toString("hex")).toBe(A3.sharedSecret);
    const keys = setupBaseRecipient(hex(A3.enc), recipient(A3.skRm), Buffer.alloc(0));
    expect(keys.sharedSecret.toString("hex")).toBe(A3.sharedSecret);
  });

  it("refuses a ciphertext or aad that was changed", () => {
    const keys = setupBaseRecipient(hex(VECTOR.enc), recipient(VECTOR.skRm), hex(VECTOR.info));
    const ct = hex(VECTOR.ct);
    ct[3] = (ct[3] as number) ^ 1;
    expect(() => openFirst(keys, hex(VECTOR.aad), ct)).toThrow();
    expect(() => openFirst(keys, Buffer.from("Count-1"), hex(VECTOR.ct))).toThrow();
  });
});

describe("HPKE on node:crypto against @payments-sandbox/crypto (@hpke/core)", () => {
  const plaintext = Buffer.from("a session key, or an OTP payload ☕", "utf8");

  it("seals what @hpke/core opens, to either form of the recipient key", async () => {
    const key = generateP256KeyPair();
    for (const recipientPublicKeyHex of [key.publicKeyUncompressedHex, key.publicKeyHex]) {
      const sealed = hpkeSeal(plaintext, recipientPublicKeyHex);
      expect(sealed.encappedPublic).toHaveLength(65);
      expect(sealed.ciphertext).toHaveLength(plaintext.length + 16);
      const opened = await portableOpen({ ...sealed, recipientPrivateKeyHex: key.privateKeyHex });
      expect(Buffer.from(opened)).toEqual(plaintext);
    }
  });

  it("opens what @hpke/core seals, with the encapped key in either form", async () => {
    const key = generateP256KeyPair();
    const sealed = await portableSeal({ plaintext, recipientPublicKeyHex: key.publicKeyHex });
    const opened = hpkeOpen({ ...sealed, recipientPrivateKeyHex: key.privateKeyHex });
    expect(opened).toEqual(plaintext);
    const encCompressed = ECDH.convertKey(
      Buffer.from(sealed.encappedPublic),
      "prime256v1",
      undefined,
      undefined,
      "compressed",
    ) as Buffer;
    expect(
      hpkeOpen({
        encappedPublic: encCompressed,
        ciphertext: sealed.ciphertext,
        recipientPrivateKeyHex: key.privateKeyHex,
      }),
    ).toEqual(plaintext);
  });

  it("opens the known-answer session key bundle of @turnkey/crypto's tests", () => {
    const bundle =
      "w99a5xV6A75TfoAUkZn869fVyDYvgVsKrawMALZXmrauZd8hEv66EkPU1Z42CUaHESQjcA5bqd8dynTGBMLWB9ewtXWPEVbZvocB4Tw2K1vQVp7uwjf";
    const opened = hpkeOpen({
      ...decodeSessionKeyBundle(bundle),
      recipientPrivateKeyHex: "20fa65df11f24833790ae283fc9a0c215eecbbc589549767977994dc69d05a56",
    });
    expect(opened.toString("hex")).toBe(
      "67ee05fc3bdf4161bc70701c221d8d77180294cefcfcea64ba83c4d4c732fcb9",
    );
  });

  it("refuses a wrong key, a changed ciphertext and an encapped key off the curve", async () => {
    const key = generateP256KeyPair();
    const sealed = await portableSeal({ plaintext, recipientPublicKeyHex: key.publicKeyHex });
    const other = generateP256KeyPair();
    expect(() => hpkeOpen({ ...sealed, recipientPrivateKeyHex: other.privateKeyHex })).toThrow(
      CryptoError,
    );
    const changed = Buffer.from(sealed.ciphertext);
    changed[0] = (changed[0] as number) ^ 0x80;
    expect(() =>
      hpkeOpen({ ...sealed, ciphertext: changed, recipientPrivateKeyHex: key.privateKeyHex }),
    ).toThrow(CryptoError);
    expect(() =>
      hpkeOpen({
        ...sealed,
        ciphertext: sealed.ciphertext.subarray(0, 10),
        recipientPrivateKeyHex: key.privateKeyHex,
      }),
    ).toThrow(CryptoError);
    const offCurve = Buffer.from(sealed.encappedPublic);
    offCurve[64] = (offCurve[64] as number) ^ 1;
    const hybrid = Buffer.from(sealed.encappedPublic);
    hybrid[0] = 0x06 | ((hybrid[64] as number) & 1);
    const noPoint = Buffer.from(`02${"00".repeat(31)}01`, "hex");
    for (const encappedPublic of [offCurve, hybrid, noPoint]) {
      expect(() =>
        hpkeOpen({ ...sealed, encappedPublic, recipientPrivateKeyHex: key.privateKeyHex }),
      ).toThrow(CryptoError);
    }
    expect(() => hpkeSeal(plaintext, `04${"11".repeat(64)}`)).toThrow(CryptoError);
  });
});
