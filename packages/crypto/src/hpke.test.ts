import { Aes256Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from "@hpke/core";
import { decryptCredentialBundle, hpkeDecrypt, hpkeEncrypt } from "@turnkey/crypto";
import bs58check from "bs58check";
import { describe, expect, it } from "vitest";
import {
  CryptoError,
  bytesToHex,
  generateP256KeyPair,
  hexToBytes,
  hpkeOpen,
  hpkeSeal,
  openSessionKeyBundle,
  sealSessionKeyBundle,
  utf8,
} from "./index.js";

// Known answer from @turnkey/crypto's own test-suite (see FACTS.md).
const KAT = {
  receiverPrivateKey: "20fa65df11f24833790ae283fc9a0c215eecbbc589549767977994dc69d05a56",
  bundle:
    "w99a5xV6A75TfoAUkZn869fVyDYvgVsKrawMALZXmrauZd8hEv66EkPU1Z42CUaHESQjcA5bqd8dynTGBMLWB9ewtXWPEVbZvocB4Tw2K1vQVp7uwjf",
  plaintext: "67ee05fc3bdf4161bc70701c221d8d77180294cefcfcea64ba83c4d4c732fcb9",
};

async function expectCryptoError(promise: Promise<unknown>): Promise<void> {
  await expect(promise).rejects.toBeInstanceOf(CryptoError);
}

function flipBit(bytes: Uint8Array, index: number): Uint8Array {
  const copy = bytes.slice();
  copy[index] = (copy[index] ?? 0) ^ 0x01;
  return copy;
}

describe("HPKE known answer", () => {
  it("openSessionKeyBundle decrypts the reference bundle", async () => {
    await expect(openSessionKeyBundle(KAT.bundle, KAT.receiverPrivateKey)).resolves.toBe(
      KAT.plaintext,
    );
  });

  it("fails with another private key", async () => {
    await expectCryptoError(openSessionKeyBundle(KAT.bundle, generateP256KeyPair().privateKeyHex));
  });
});

describe("hpkeSeal / hpkeOpen", () => {
  const plaintext = utf8("attack at dawn ✓");

  it("round-trips and returns an uncompressed encapsulated key", async () => {
    const kp = generateP256KeyPair();
    const sealed = await hpkeSeal({ plaintext, recipientPublicKeyHex: kp.publicKeyHex });
    expect(sealed.encappedPublic.length).toBe(65);
    expect(sealed.encappedPublic[0]).toBe(0x04);
    expect(sealed.ciphertext.length).toBe(plaintext.length + 16);
    const opened = await hpkeOpen({ ...sealed, recipientPrivateKeyHex: kp.privateKeyHex });
    expect(opened).toEqual(plaintext);
  });

  it("accepts the recipient key uncompressed and the encapped key compressed", async () => {
    const kp = generateP256KeyPair();
    const sealed = await hpkeSeal({
      plaintext,
      recipientPublicKeyHex: kp.publicKeyUncompressedHex,
    });
    const prefix = 2 + ((sealed.encappedPublic[64] ?? 0) & 1);
    const compressed = new Uint8Array([prefix, ...sealed.encappedPublic.subarray(1, 33)]);
    const opened = await hpkeOpen({
      encappedPublic: compressed,
      ciphertext: sealed.ciphertext,
      recipientPrivateKeyHex: kp.privateKeyHex,
    });
    expect(opened).toEqual(plaintext);
  });

  it("uses a fresh ephemeral key each time", async () => {
    const kp = generateP256KeyPair();
    const a = await hpkeSeal({ plaintext, recipientPublicKeyHex: kp.publicKeyHex });
    const b = await hpkeSeal({ plaintext, recipientPublicKeyHex: kp.publicKeyHex });
    expect(bytesToHex(a.encappedPublic)).not.toBe(bytesToHex(b.encappedPublic));
    expect(bytesToHex(a.ciphertext)).not.toBe(bytesToHex(b.ciphertext));
  });

  it("rejects tampered ciphertext, tag, encapsulated key and wrong keys", async () => {
    const kp = generateP256KeyPair();
    const sealed = await hpkeSeal({ plaintext, recipientPublicKeyHex: kp.publicKeyHex });
    const recipientPrivateKeyHex = kp.privateKeyHex;
    await expectCryptoError(
      hpkeOpen({ ...sealed, ciphertext: flipBit(sealed.ciphertext, 0), recipientPrivateKeyHex }),
    );
    await expectCryptoError(
      hpkeOpen({
        ...sealed,
        ciphertext: flipBit(sealed.ciphertext, sealed.ciphertext.length - 1),
        recipientPrivateKeyHex,
      }),
    );
    await expectCryptoError(
      hpkeOpen({ ...sealed, ciphertext: sealed.ciphertext.subarray(1), recipientPrivateKeyHex }),
    );
    const otherEphemeral = hexToBytes(generateP256KeyPair().publicKeyUncompressedHex);
    await expectCryptoError(
      hpkeOpen({ ...sealed, encappedPublic: otherEphemeral, recipientPrivateKeyHex }),
    );
    await expectCryptoError(
      hpkeOpen({
        ...sealed,
        encappedPublic: flipBit(sealed.encappedPublic, 10),
        recipientPrivateKeyHex,
      }),
    );
    await expectCryptoError(
      hpkeOpen({ ...sealed, recipientPrivateKeyHex: generateP256KeyPair().privateKeyHex }),
    );
  });

  it("binds info 'turnkey_hpke' and aad = encapped || recipient (checked with raw @hpke/core)", async () => {
    const kp = generateP256KeyPair();
    const sealed = await hpkeSeal({ plaintext, recipientPublicKeyHex: kp.publicKeyHex });
    const suite = new CipherSuite({
      kem: new DhkemP256HkdfSha256(),
      kdf: new HkdfSha256(),
      aead: new Aes256Gcm(),
    });
    const recipientKey = await suite.kem.deserializePrivateKey(hexToBytes(kp.privateKeyHex));
    const open = async (info: string, aad: Uint8Array): Promise<Uint8Array> => {
      const ctx = await suite.createRecipientContext({
        recipientKey,
        enc: sealed.encappedPublic,
        info: utf8(info),
      });
      return new Uint8Array(await ctx.open(sealed.ciphertext, aad));
    };
    const aad = new Uint8Array([
      ...sealed.encappedPublic,
      ...hexToBytes(kp.publicKeyUncompressedHex),
    ]);
    expect(await open("turnkey_hpke", aad)).toEqual(plaintext);
    await expect(open("turnkey_hpke", new Uint8Array())).rejects.toThrow();
    await expect(open("other_info", aad)).rejects.toThrow();
    // The compressed recipient key is not what goes into the aad.
    const compressedAad = new Uint8Array([
      ...sealed.encappedPublic,
      ...hexToBytes(kp.publicKeyHex),
    ]);
    await expect(open("turnkey_hpke", compressedAad)).rejects.toThrow();
  });
});

describe("interop with @turnkey/crypto HPKE", () => {
  it("their hpkeDecrypt opens our hpkeSeal output", async () => {
    const kp = generateP256KeyPair();
    const plaintext = utf8("hello from the server");
    const sealed = await hpkeSeal({ plaintext, recipientPublicKeyHex: kp.publicKeyHex });
    const opened = hpkeDecrypt({
      ciphertextBuf: sealed.ciphertext,
      encappedKeyBuf: sealed.encappedPublic,
      receiverPriv: kp.privateKeyHex,
    });
    expect(new Uint8Array(opened)).toEqual(plaintext);
  });

  it("our hpkeOpen opens their hpkeEncrypt output", async () => {
    const kp = generateP256KeyPair();
    const plaintext = utf8("hello from the client");
    // Their output is compressed encapped key (33 bytes) || ciphertext.
    const out = hpkeEncrypt({
      plainTextBuf: plaintext,
      targetKeyBuf: hexToBytes(kp.publicKeyUncompressedHex),
    });
    const opened = await hpkeOpen({
      encappedPublic: out.subarray(0, 33),
      ciphertext: out.subarray(33),
      recipientPrivateKeyHex: kp.privateKeyHex,
    });
    expect(opened).toEqual(plaintext);
  });
});

describe("session key bundle", () => {
  it("round-trips with an 81-byte base58check payload", async () => {
    const client = generateP256KeyPair();
    const session = generateP256KeyPair();
    const bundle = await sealSessionKeyBundle(session.privateKeyHex, client.publicKeyHex);
    const payload = bs58check.decode(bundle);
    expect(payload.length).toBe(81);
    expect([0x02, 0x03]).toContain(payload[0]);
    await expect(openSessionKeyBundle(bundle, client.privateKeyHex)).resolves.toBe(
      session.privateKeyHex,
    );
  });

  it("is opened by @turnkey/crypto decryptCredentialBundle", async () => {
    const client = generateP256KeyPair();
    const session = generateP256KeyPair();
    for (const recipient of [client.publicKeyHex, client.publicKeyUncompressedHex]) {
      const bundle = await sealSessionKeyBundle(session.privateKeyHex, recipient);
      expect(decryptCredentialBundle(bundle, client.privateKeyHex)).toBe(session.privateKeyHex);
    }
  });

  it("rejects a wrong key, a bad checksum and a wrong length", async () => {
    const client = generateP256KeyPair();
    const session = generateP256KeyPair();
    const bundle = await sealSessionKeyBundle(session.privateKeyHex, client.publicKeyHex);
    await expectCryptoError(openSessionKeyBundle(bundle, generateP256KeyPair().privateKeyHex));

    const payload = bs58check.decode(bundle);
    const tampered = bs58check.encode(flipBit(payload, 50));
    await expectCryptoError(openSessionKeyBundle(tampered, client.privateKeyHex));

    // Corrupt one base58 character so the checksum no longer matches.
    const last = bundle.at(-1) === "1" ? "2" : "1";
    await expectCryptoError(openSessionKeyBundle(bundle.slice(0, -1) + last, client.privateKeyHex));

    await expectCryptoError(
      openSessionKeyBundle(bs58check.encode(payload.subarray(0, 80)), client.privateKeyHex),
    );
    await expectCryptoError(openSessionKeyBundle("not base58 0OIl", client.privateKeyHex));
  });

  it("refuses to seal something that is not a 32-byte private key", async () => {
    const client = generateP256KeyPair();
    await expectCryptoError(sealSessionKeyBundle("abcd", client.publicKeyHex));
    await expectCryptoError(sealSessionKeyBundle("00".repeat(32), client.publicKeyHex));
  });
});
