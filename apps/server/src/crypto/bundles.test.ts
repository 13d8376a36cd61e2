import {
  decryptCredentialBundle,
  encryptOtpCodeToBundle,
  uncompressRawPublicKey,
} from "@turnkey/crypto";
import * as portable from "@payments-sandbox/crypto";
import { CryptoError } from "@payments-sandbox/crypto";
import { p256 } from "@noble/curves/nist.js";
import { describe, expect, it } from "vitest";
import { createOtpTargetBundle, openOtpBundle, sealSessionKeyBundle } from "./bundles.js";

// What the server hands out must be accepted by the portable client library
// and by the reference one (@turnkey/crypto, whose own noble-based HPKE and
// ECDSA are a third implementation); what clients send must open here.

const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const enclave = portable.generateP256KeyPair();
const ORG = "Platform:019a7f0e-0000-7000-8000-000000000001";
const USER = "InternalAccount:019a7f0e-0000-7000-8000-000000000002";

function targetBundle(target: portable.P256KeyPair): string {
  return createOtpTargetBundle({
    target,
    organizationId: ORG,
    userId: USER,
    signingPrivateKeyHex: enclave.privateKeyHex,
  });
}

/** S of a DER signature (short lengths, as every P-256 signature has). */
function sOf(derHex: string): bigint {
  const bytes = Buffer.from(derHex, "hex");
  const rLength = bytes[3] as number;
  const sLength = bytes[5 + rLength] as number;
  return BigInt(`0x${bytes.subarray(6 + rLength, 6 + rLength + sLength).toString("hex")}`);
}

describe("OTP target bundle signed with node:crypto", () => {
  it("is the portable bundle but for the signature, and the portable client verifies it", () => {
    const target = portable.generateP256KeyPair();
    const ours = JSON.parse(targetBundle(target)) as Record<string, string>;
    const theirs = JSON.parse(
      portable.createOtpTargetBundle({
        targetPublicKeyHex: target.publicKeyHex,
        organizationId: ORG,
        userId: USER,
        signingPrivateKeyHex: enclave.privateKeyHex,
      }),
    ) as Record<string, string>;
    expect(Object.keys(ours)).toEqual(Object.keys(theirs));
    expect({ ...ours, dataSignature: "" }).toEqual({ ...theirs, dataSignature: "" });
    expect(
      portable.verifyOtpTargetBundle(JSON.stringify(ours), enclave.publicKeyUncompressedHex),
    ).toEqual({ targetPublic: target.publicKeyUncompressedHex, organizationId: ORG, userId: USER });
  });

  it("has low-S signatures, like the portable signer's, and the reference client accepts it", async () => {
    // A client verifying with @noble/curves 2.x defaults refuses high S: half
    // of OpenSSL's signatures would fail there without normalisation.
    const target = portable.generateP256KeyPair();
    const tek = portable.generateP256KeyPair();
    for (let i = 0; i < 24; i++) {
      const bundle = targetBundle(target);
      const { data, dataSignature } = JSON.parse(bundle) as Record<string, string>;
      expect(sOf(dataSignature as string) <= N / 2n).toBe(true);
      const signature = Buffer.from(dataSignature as string, "hex");
      const message = Buffer.from(data as string, "hex");
      const enclaveKey = Buffer.from(enclave.publicKeyUncompressedHex, "hex");
      expect(p256.verify(signature, message, enclaveKey, { format: "der" })).toBe(true);
      const encrypted = await encryptOtpCodeToBundle(
        "000000",
        bundle,
        tek.publicKeyHex,
        enclave.publicKeyUncompressedHex,
      );
      expect(openOtpBundle(encrypted, target.privateKeyHex)).toEqual({
        otpCode: "000000",
        publicKey: tek.publicKeyHex,
      });
    }
  });

  it("is not accepted under another enclave key", () => {
    const target = portable.generateP256KeyPair();
    const other = portable.generateP256KeyPair();
    expect(() =>
      portable.verifyOtpTargetBundle(targetBundle(target), other.publicKeyUncompressedHex),
    ).toThrow(CryptoError);
  });
});

describe("encrypted OTP bundle opened with node:crypto", () => {
  it("opens the portable client's bundle and returns the TEK as it was sent", async () => {
    const target = portable.generateP256KeyPair();
    const tek = portable.generateP256KeyPair();
    for (const tekPublicKeyHex of [tek.publicKeyHex, tek.publicKeyUncompressedHex]) {
      const encrypted = await portable.sealOtpBundle({
        otpCode: "123456",
        tekPublicKeyHex,
        targetPublicKeyHex: target.publicKeyUncompressedHex,
      });
      expect(openOtpBundle(encrypted, target.privateKeyHex)).toEqual(
        await portable.openOtpBundle(encrypted, target.privateKeyHex),
      );
      expect(openOtpBundle(encrypted, target.privateKeyHex).publicKey).toBe(tekPublicKeyHex);
    }
  });

  it("refuses a bundle for another target key, tampered, malformed, or with a TEK off the curve", async () => {
    const target = portable.generateP256KeyPair();
    const tek = portable.generateP256KeyPair();
    const encrypted = await portable.sealOtpBundle({
      otpCode: "000000",
      tekPublicKeyHex: tek.publicKeyHex,
      targetPublicKeyHex: target.publicKeyUncompressedHex,
    });
    const other = portable.generateP256KeyPair();
    expect(() => openOtpBundle(encrypted, other.privateKeyHex)).toThrow(CryptoError);

    const parsed = JSON.parse(encrypted) as { encappedPublic: string; ciphertext: string };
    const flipped = `${parsed.ciphertext.slice(0, -1)}${parsed.ciphertext.endsWith("0") ? "1" : "0"}`;
    const tampered = JSON.stringify({ ...parsed, ciphertext: flipped });
    expect(() => openOtpBundle(tampered, target.privateKeyHex)).toThrow(CryptoError);
    expect(() => openOtpBundle("{not json", target.privateKeyHex)).toThrow(CryptoError);
    expect(() =>
      openOtpBundle('{"encappedPublic":"zz","ciphertext":"00"}', target.privateKeyHex),
    ).toThrow(CryptoError);

    const badTek = await portable.hpkeSeal({
      plaintext: new TextEncoder().encode(
        JSON.stringify({ otp_code: "000000", public_key: `02${"00".repeat(31)}01` }),
      ),
      recipientPublicKeyHex: target.publicKeyHex,
    });
    const withBadTek = JSON.stringify({
      encappedPublic: Buffer.from(badTek.encappedPublic).toString("hex"),
      ciphertext: Buffer.from(badTek.ciphertext).toString("hex"),
    });
    expect(() => openOtpBundle(withBadTek, target.privateKeyHex)).toThrow(/public_key/);
  });
});

describe("session key bundle sealed with node:crypto", () => {
  it("opens in the portable client and in @turnkey/crypto's decryptCredentialBundle", async () => {
    const client = portable.generateP256KeyPair();
    const session = portable.generateP256KeyPair();
    for (const recipient of [client.publicKeyUncompressedHex, client.publicKeyHex]) {
      const bundle = sealSessionKeyBundle(session.privateKeyHex, recipient);
      const { encappedPublic, ciphertext } = portable.decodeSessionKeyBundle(bundle);
      expect(encappedPublic).toHaveLength(33);
      expect(ciphertext).toHaveLength(48);
      // The encapped key is a point (the reference client decompresses it).
      expect(uncompressRawPublicKey(encappedPublic)).toHaveLength(65);
      expect(await portable.openSessionKeyBundle(bundle, client.privateKeyHex)).toBe(
        session.privateKeyHex,
      );
      expect(decryptCredentialBundle(bundle, client.privateKeyHex)).toBe(session.privateKeyHex);
    }
  });

  it("refuses a session key or a client key that is not P-256", () => {
    const client = portable.generateP256KeyPair();
    expect(() => sealSessionKeyBundle("00".repeat(32), client.publicKeyHex)).toThrow(CryptoError);
    expect(() => sealSessionKeyBundle(client.privateKeyHex, `04${"11".repeat(64)}`)).toThrow(
      CryptoError,
    );
  });
});
