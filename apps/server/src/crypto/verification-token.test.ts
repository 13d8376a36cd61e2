import { verifyOtpVerificationToken } from "@turnkey/crypto";
import * as portable from "@payments-sandbox/crypto";
import { p256 } from "@noble/curves/nist.js";
import { compactVerify, importJWK } from "jose";
import { describe, expect, it } from "vitest";
import { issueVerificationToken } from "./verification-token.js";

const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const enclave = portable.generateP256KeyPair();
const tek = portable.generateP256KeyPair();
const input = {
  id: "2f0d6f9e-0b6f-4d55-9d57-3f1a2b4c5d6e",
  verificationType: "OTP_TYPE_EMAIL" as const,
  contact: "user@example.com",
  organizationId: "Platform:1",
  publicKey: tek.publicKeyHex,
  // Far ahead: @turnkey/crypto checks exp against the real clock.
  expiresAtMs: Date.now() + 3_600_000,
};

describe("OTP verification token signed with node:crypto", () => {
  it("has the portable token's header and claims, byte for byte", () => {
    const ours = issueVerificationToken(input, enclave.privateKeyHex).split(".");
    const theirs = portable.issueVerificationToken(input, enclave.privateKeyHex).split(".");
    expect(ours.slice(0, 2)).toEqual(theirs.slice(0, 2));
    expect(Buffer.from(ours[2] as string, "base64url")).toHaveLength(64);
  });

  it("verifies in the portable client, @turnkey/crypto, jose and noble's defaults (low S)", async () => {
    const bytes = Buffer.from(enclave.publicKeyUncompressedHex, "hex");
    const jwk = {
      kty: "EC",
      crv: "P-256",
      x: bytes.subarray(1, 33).toString("base64url"),
      y: bytes.subarray(33).toString("base64url"),
    };
    const key = await importJWK(jwk, "ES256");
    for (let i = 0; i < 24; i++) {
      const token = issueVerificationToken(input, enclave.privateKeyHex);
      const [header, payload, signature] = token.split(".") as [string, string, string];
      const rs = Buffer.from(signature, "base64url");
      expect(BigInt(`0x${rs.subarray(32).toString("hex")}`) <= N / 2n).toBe(true);
      // @noble/curves 2.x defaults (SHA-256 prehash, low S only).
      expect(p256.verify(rs, Buffer.from(`${header}.${payload}`), bytes)).toBe(true);
      expect(portable.verifyVerificationToken(token, enclave.publicKeyHex).public_key).toBe(
        tek.publicKeyHex,
      );
      const claims = await verifyOtpVerificationToken(token, enclave.publicKeyUncompressedHex);
      expect(claims).toMatchObject({ public_key: tek.publicKeyHex, organization_id: "Platform:1" });
      await expect(compactVerify(token, key)).resolves.toBeTruthy();
    }
  });

  it("does not verify under another key", () => {
    const other = portable.generateP256KeyPair();
    const token = issueVerificationToken(input, enclave.privateKeyHex);
    expect(() => portable.verifyVerificationToken(token, other.publicKeyHex)).toThrow(
      portable.CryptoError,
    );
  });
});
