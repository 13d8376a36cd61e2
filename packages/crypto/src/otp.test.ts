import { createPublicKey, verify as nodeVerify } from "node:crypto";
import { encryptOtpCodeToBundle, hpkeDecrypt, verifyOtpVerificationToken } from "@turnkey/crypto";
import { CompactSign, compactVerify, importJWK } from "jose";
import { describe, expect, it } from "vitest";
import {
  CryptoError,
  base64urlDecode,
  base64urlEncode,
  bytesToHex,
  createOtpTargetBundle,
  generateP256KeyPair,
  hexToBytes,
  hpkeSeal,
  isVerificationTokenExpired,
  issueVerificationToken,
  openOtpBundle,
  publicKeyToSpkiPem,
  sealOtpBundle,
  utf8,
  verifyOtpTargetBundle,
  verifyVerificationToken,
} from "./index.js";
import type { P256KeyPair, VerificationTokenInput } from "./index.js";

const ORG = "Organization:7f0c2a1e";
const USER = "User:1b2d";

function newTarget(enclave: P256KeyPair, target = generateP256KeyPair()) {
  const bundle = createOtpTargetBundle({
    targetPublicKeyHex: target.publicKeyUncompressedHex,
    organizationId: ORG,
    userId: USER,
    signingPrivateKeyHex: enclave.privateKeyHex,
  });
  return { target, bundle };
}

function jwkOf(kp: P256KeyPair): { kty: string; crv: string; x: string; y: string } {
  const point = hexToBytes(kp.publicKeyUncompressedHex);
  return {
    kty: "EC",
    crv: "P-256",
    x: base64urlEncode(point.subarray(1, 33)),
    y: base64urlEncode(point.subarray(33)),
  };
}

describe("OTP target bundle", () => {
  it("has the documented shape and an OpenSSL-verifiable signature", () => {
    const enclave = generateP256KeyPair();
    const target = generateP256KeyPair();
    // Compressed input is normalised to the uncompressed form in `data`.
    const bundle = createOtpTargetBundle({
      targetPublicKeyHex: target.publicKeyHex,
      organizationId: ORG,
      userId: USER,
      signingPrivateKeyHex: enclave.privateKeyHex,
    });
    const outer = JSON.parse(bundle) as Record<string, string>;
    expect(Object.keys(outer)).toEqual(["version", "data", "dataSignature", "enclaveQuorumPublic"]);
    expect(outer.version).toBe("v1.0.0");
    expect(outer.enclaveQuorumPublic).toBe(enclave.publicKeyUncompressedHex);
    const dataBytes = hexToBytes(outer.data ?? "");
    expect(JSON.parse(new TextDecoder().decode(dataBytes))).toEqual({
      targetPublic: target.publicKeyUncompressedHex,
      organizationId: ORG,
      userId: USER,
    });
    const pem = publicKeyToSpkiPem(enclave.publicKeyHex);
    const sig = Buffer.from(outer.dataSignature ?? "", "hex");
    expect(nodeVerify("sha256", dataBytes, pem, sig)).toBe(true);
    expect(nodeVerify("sha256", utf8(outer.data ?? ""), pem, sig)).toBe(false);
  });

  it("verifies with the expected key in either form", () => {
    const enclave = generateP256KeyPair();
    const { target, bundle } = newTarget(enclave);
    const expected = {
      targetPublic: target.publicKeyUncompressedHex,
      organizationId: ORG,
      userId: USER,
    };
    expect(verifyOtpTargetBundle(bundle, enclave.publicKeyUncompressedHex)).toEqual(expected);
    expect(verifyOtpTargetBundle(bundle, enclave.publicKeyHex)).toEqual(expected);
  });

  it("rejects another signer, tampered data and a tampered signature", () => {
    const enclave = generateP256KeyPair();
    const { bundle } = newTarget(enclave);
    const outer = JSON.parse(bundle) as Record<string, string>;

    expect(() => verifyOtpTargetBundle(bundle, generateP256KeyPair().publicKeyHex)).toThrow(
      CryptoError,
    );

    const data = new TextDecoder().decode(hexToBytes(outer.data ?? ""));
    const forgedData = bytesToHex(utf8(data.replace(USER, "User:evil")));
    expect(() =>
      verifyOtpTargetBundle(JSON.stringify({ ...outer, data: forgedData }), enclave.publicKeyHex),
    ).toThrow(CryptoError);

    // Re-signed by an attacker who also swaps enclaveQuorumPublic: the
    // expected-key check must catch it.
    const attacker = generateP256KeyPair();
    const { bundle: attackerBundle } = newTarget(attacker);
    expect(() => verifyOtpTargetBundle(attackerBundle, enclave.publicKeyHex)).toThrow(
      /unexpected key/,
    );

    const otherSig = (JSON.parse(newTarget(enclave).bundle) as Record<string, string>)
      .dataSignature;
    expect(() =>
      verifyOtpTargetBundle(
        JSON.stringify({ ...outer, dataSignature: otherSig }),
        enclave.publicKeyHex,
      ),
    ).toThrow(/signature is invalid/);
    expect(() => verifyOtpTargetBundle("{", enclave.publicKeyHex)).toThrow(CryptoError);
    expect(() =>
      verifyOtpTargetBundle(JSON.stringify({ ...outer, version: "v2" }), enclave.publicKeyHex),
    ).toThrow(CryptoError);
  });

  it("is accepted by @turnkey/crypto encryptOtpCodeToBundle only with the right key", async () => {
    const enclave = generateP256KeyPair();
    const { bundle } = newTarget(enclave);
    const tek = generateP256KeyPair();
    await expect(
      encryptOtpCodeToBundle("123456", bundle, tek.publicKeyHex, enclave.publicKeyUncompressedHex),
    ).resolves.toContain("encappedPublic");
    // Their check is real: a bundle signed by someone else is refused.
    await expect(
      encryptOtpCodeToBundle(
        "123456",
        bundle,
        tek.publicKeyHex,
        generateP256KeyPair().publicKeyUncompressedHex,
      ),
    ).rejects.toThrow();
    const outer = JSON.parse(bundle) as Record<string, string>;
    const forged = JSON.stringify({
      ...outer,
      dataSignature: (JSON.parse(newTarget(enclave).bundle) as Record<string, string>)
        .dataSignature,
    });
    await expect(
      encryptOtpCodeToBundle("123456", forged, tek.publicKeyHex, enclave.publicKeyUncompressedHex),
    ).rejects.toThrow();
  });
});

describe("encrypted OTP bundle", () => {
  it("opens the output of @turnkey/crypto encryptOtpCodeToBundle", async () => {
    const enclave = generateP256KeyPair();
    const { target, bundle } = newTarget(enclave);
    const tek = generateP256KeyPair();
    const encrypted = await encryptOtpCodeToBundle(
      "048213",
      bundle,
      tek.publicKeyHex,
      enclave.publicKeyUncompressedHex,
    );
    await expect(openOtpBundle(encrypted, target.privateKeyHex)).resolves.toEqual({
      otpCode: "048213",
      publicKey: tek.publicKeyHex,
    });
    await expect(
      openOtpBundle(encrypted, generateP256KeyPair().privateKeyHex),
    ).rejects.toBeInstanceOf(CryptoError);
  });

  it("round-trips sealOtpBundle with a compressed or an uncompressed TEK", async () => {
    const target = generateP256KeyPair();
    const tek = generateP256KeyPair();
    for (const tekHex of [tek.publicKeyHex, tek.publicKeyUncompressedHex]) {
      const sealed = await sealOtpBundle({
        otpCode: "000000",
        tekPublicKeyHex: tekHex,
        targetPublicKeyHex: target.publicKeyUncompressedHex,
      });
      expect(Object.keys(JSON.parse(sealed) as object)).toEqual(["encappedPublic", "ciphertext"]);
      await expect(openOtpBundle(sealed, target.privateKeyHex)).resolves.toEqual({
        otpCode: "000000",
        publicKey: tekHex,
      });
    }
  });

  it("sealOtpBundle output is the documented plaintext (decrypted by @turnkey/crypto)", async () => {
    const target = generateP256KeyPair();
    const tek = generateP256KeyPair();
    const sealed = JSON.parse(
      await sealOtpBundle({
        otpCode: "987654",
        tekPublicKeyHex: tek.publicKeyHex,
        targetPublicKeyHex: target.publicKeyUncompressedHex,
      }),
    ) as { encappedPublic: string; ciphertext: string };
    expect(sealed.encappedPublic).toMatch(/^04[0-9a-f]{128}$/);
    const plaintext = hpkeDecrypt({
      ciphertextBuf: hexToBytes(sealed.ciphertext),
      encappedKeyBuf: hexToBytes(sealed.encappedPublic),
      receiverPriv: target.privateKeyHex,
    });
    expect(new TextDecoder().decode(plaintext)).toBe(
      JSON.stringify({ otp_code: "987654", public_key: tek.publicKeyHex }),
    );
  });

  describe("rejections", () => {
    const target = generateP256KeyPair();
    const tek = generateP256KeyPair();
    const sealRaw = async (obj: unknown): Promise<string> => {
      const { encappedPublic, ciphertext } = await hpkeSeal({
        plaintext: utf8(typeof obj === "string" ? obj : JSON.stringify(obj)),
        recipientPublicKeyHex: target.publicKeyHex,
      });
      return JSON.stringify({
        encappedPublic: bytesToHex(encappedPublic),
        ciphertext: bytesToHex(ciphertext),
      });
    };

    it.each<[string, () => Promise<string>, RegExp]>([
      ["not JSON", async () => "encappedPublic=04", /not valid JSON/],
      ["a JSON array", async () => "[]", /JSON object/],
      ["missing ciphertext", async () => JSON.stringify({ encappedPublic: "04" }), /ciphertext/],
      [
        "non-hex ciphertext",
        async () =>
          JSON.stringify({ encappedPublic: tek.publicKeyUncompressedHex, ciphertext: "xyz!" }),
        /not hex/,
      ],
      [
        "a tampered ciphertext",
        async () => {
          const good = JSON.parse(
            await sealOtpBundle({
              otpCode: "111111",
              tekPublicKeyHex: tek.publicKeyHex,
              targetPublicKeyHex: target.publicKeyHex,
            }),
          ) as { encappedPublic: string; ciphertext: string };
          const c = good.ciphertext;
          const flipped = (parseInt(c.slice(0, 2), 16) ^ 1).toString(16).padStart(2, "0");
          return JSON.stringify({ ...good, ciphertext: flipped + c.slice(2) });
        },
        /decryption failed/,
      ],
      ["a plaintext that is not JSON", () => sealRaw("123456"), /decrypted OTP payload/],
      ["a missing otp_code", () => sealRaw({ public_key: tek.publicKeyHex }), /otp_code/],
      [
        "a numeric otp_code",
        () => sealRaw({ otp_code: 123456, public_key: tek.publicKeyHex }),
        /otp_code/,
      ],
      ["a missing public_key", () => sealRaw({ otp_code: "123456" }), /public_key/],
      [
        "an invalid public_key",
        () => sealRaw({ otp_code: "123456", public_key: "02abcd" }),
        /public_key/,
      ],
    ])("%s", async (_name, make, reason) => {
      const bundle = await make();
      const err: unknown = await openOtpBundle(bundle, target.privateKeyHex).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CryptoError);
      expect((err as CryptoError).reason).toMatch(reason);
    });
  });
});

describe("verification token", () => {
  const enclave = generateP256KeyPair();
  const tek = generateP256KeyPair();
  const input = (expiresAtMs: number): VerificationTokenInput => ({
    id: "Verification:5c0f",
    verificationType: "OTP_TYPE_EMAIL",
    contact: "ada@example.com",
    organizationId: ORG,
    publicKey: tek.publicKeyHex,
    expiresAtMs,
  });

  it("is an ES256 JWT with string claims and exp in milliseconds", () => {
    const exp = Date.now() + 600_000;
    const token = issueVerificationToken(input(exp), enclave.privateKeyHex);
    const [h, p, s] = token.split(".") as [string, string, string];
    expect(new TextDecoder().decode(base64urlDecode(h))).toBe('{"alg":"ES256","typ":"JWT"}');
    expect(JSON.parse(new TextDecoder().decode(base64urlDecode(p)))).toEqual({
      id: "Verification:5c0f",
      verification_type: "OTP_TYPE_EMAIL",
      contact: "ada@example.com",
      organization_id: ORG,
      public_key: tek.publicKeyHex,
      exp: String(exp),
    });
    expect(base64urlDecode(s).length).toBe(64);
    expect(verifyVerificationToken(token, enclave.publicKeyUncompressedHex).exp).toBe(String(exp));
  });

  it("passes @turnkey/crypto verifyOtpVerificationToken with the enclave key", async () => {
    const exp = Date.now() + 600_000;
    const token = issueVerificationToken(input(exp), enclave.privateKeyHex);
    const claims = await verifyOtpVerificationToken(token, enclave.publicKeyUncompressedHex);
    expect(claims).toEqual(verifyVerificationToken(token, enclave.publicKeyHex));
    await expect(
      verifyOtpVerificationToken(token, generateP256KeyPair().publicKeyUncompressedHex),
    ).rejects.toThrow(/signature is invalid/);
  });

  it("an expired token is rejected by @turnkey/crypto but only flagged by us", async () => {
    const exp = Date.now() - 1000;
    const token = issueVerificationToken(input(exp), enclave.privateKeyHex);
    await expect(
      verifyOtpVerificationToken(token, enclave.publicKeyUncompressedHex),
    ).rejects.toThrow(/expired/);
    const claims = verifyVerificationToken(token, enclave.publicKeyHex);
    expect(isVerificationTokenExpired(claims, Date.now())).toBe(true);
  });

  it("interoperates with jose (standard JWS ES256) in both directions", async () => {
    const key = await importJWK(jwkOf(enclave), "ES256");
    const token = issueVerificationToken(input(Date.now() + 1000), enclave.privateKeyHex);
    const { protectedHeader } = await compactVerify(token, key);
    expect(protectedHeader).toEqual({ alg: "ES256", typ: "JWT" });

    const privateKey = await importJWK(
      { ...jwkOf(enclave), d: base64urlEncode(hexToBytes(enclave.privateKeyHex)) },
      "ES256",
    );
    const claims = {
      id: "Verification:jose",
      verification_type: "OTP_TYPE_SMS",
      contact: "+15555550100",
      organization_id: ORG,
      public_key: tek.publicKeyHex,
      exp: "1893456000000",
    };
    const joseToken = await new CompactSign(utf8(JSON.stringify(claims)))
      .setProtectedHeader({ alg: "ES256", typ: "JWT" })
      .sign(privateKey);
    expect(verifyVerificationToken(joseToken, enclave.publicKeyHex)).toEqual(claims);
  });

  it("rejects tampering, other keys and malformed tokens", () => {
    const token = issueVerificationToken(input(Date.now() + 1000), enclave.privateKeyHex);
    const [h, p, s] = token.split(".") as [string, string, string];
    const other = generateP256KeyPair();
    expect(() => verifyVerificationToken(token, other.publicKeyHex)).toThrow(CryptoError);

    const claims = JSON.parse(new TextDecoder().decode(base64urlDecode(p))) as Record<
      string,
      string
    >;
    const forgedPayload = base64urlEncode(
      JSON.stringify({ ...claims, contact: "eve@example.com" }),
    );
    expect(() =>
      verifyVerificationToken(`${h}.${forgedPayload}.${s}`, enclave.publicKeyHex),
    ).toThrow(/signature is invalid/);

    const noneHeader = base64urlEncode(JSON.stringify({ alg: "none", typ: "JWT" }));
    expect(() => verifyVerificationToken(`${noneHeader}.${p}.`, enclave.publicKeyHex)).toThrow(
      /ES256/,
    );
    expect(() => verifyVerificationToken(`${h}.${p}`, enclave.publicKeyHex)).toThrow(/3 parts/);
    expect(() => verifyVerificationToken(`${h}.${p}.${s}AA`, enclave.publicKeyHex)).toThrow(
      CryptoError,
    );
    expect(() => verifyVerificationToken(`${h}.%%%.${s}`, enclave.publicKeyHex)).toThrow(
      CryptoError,
    );

    // A correctly signed token that lacks a claim is refused.
    const missing = issueVerificationToken(
      { ...input(Date.now() + 1000), contact: "" },
      enclave.privateKeyHex,
    );
    expect(() => verifyVerificationToken(missing, enclave.publicKeyHex)).toThrow(/contact/);
  });

  it("refuses to issue with a bad type or expiry", () => {
    expect(() =>
      issueVerificationToken(
        { ...input(Date.now()), verificationType: "OTP_TYPE_FAX" as never },
        enclave.privateKeyHex,
      ),
    ).toThrow(CryptoError);
    expect(() => issueVerificationToken(input(1.5), enclave.privateKeyHex)).toThrow(CryptoError);
  });

  it("isVerificationTokenExpired compares milliseconds", () => {
    expect(isVerificationTokenExpired({ exp: "1000" }, 999)).toBe(false);
    expect(isVerificationTokenExpired({ exp: "1000" }, 1000)).toBe(true);
    expect(isVerificationTokenExpired({ exp: "1000" }, 1001)).toBe(true);
    expect(isVerificationTokenExpired({ exp: "soon" }, 0)).toBe(true);
  });
});

describe("SPKI of the enclave key loads in node:crypto", () => {
  it("matches the JWK coordinates", () => {
    const enclave = generateP256KeyPair();
    const jwk = createPublicKey(publicKeyToSpkiPem(enclave.publicKeyHex)).export({ format: "jwk" });
    expect({ x: jwk.x, y: jwk.y }).toEqual({ x: jwkOf(enclave).x, y: jwkOf(enclave).y });
  });
});
