import { describe, expect, it } from "vitest";
import {
  oidcTokenOutcome,
  otpOutcome,
  passkeySignatureOutcome,
  walletSignatureOutcome,
} from "../evaluate.js";
import { SANDBOX_OTP_CODE } from "./wallet-auth.js";

describe("OTP", () => {
  it("accepts only the sandbox code", () => {
    expect(SANDBOX_OTP_CODE).toBe("000000");
    expect(otpOutcome("000000").outcome).toEqual({ kind: "ACCEPT" });
    for (const code of ["123456", "000001", " 000000", "00000", ""]) {
      expect(otpOutcome(code).outcome).toMatchObject({
        kind: "REJECT",
        status: 401,
        errorCode: "UNAUTHORIZED",
        reason: "Invalid OTP code",
      });
    }
  });
});

describe("legacy authentication shortcuts", () => {
  it("refuses the old literal OIDC token and checks every other token's claims", () => {
    expect(oidcTokenOutcome("sandbox-valid-oidc-token").outcome).toMatchObject({
      kind: "REJECT",
      status: 401,
      errorCode: "UNAUTHORIZED",
    });
    for (const token of ["a.b.c", "sandbox-valid-oidc-token ", ""]) {
      expect(oidcTokenOutcome(token).outcome).toEqual({ kind: "CHECK_CLAIMS" });
    }
  });

  it("knows the legacy passkey signature and the legacy wallet signature, exactly", () => {
    expect(passkeySignatureOutcome("sandbox-valid-passkey-signature").outcome).toEqual({
      kind: "LEGACY_ACCEPT",
    });
    expect(walletSignatureOutcome("sandbox-valid-signature").outcome).toEqual({
      kind: "LEGACY_ACCEPT",
    });
    // Each value works only where it belongs.
    expect(passkeySignatureOutcome("sandbox-valid-signature").outcome).toEqual({ kind: "VERIFY" });
    expect(walletSignatureOutcome("sandbox-valid-passkey-signature").outcome).toEqual({
      kind: "VERIFY",
    });
    expect(walletSignatureOutcome("SANDBOX-VALID-SIGNATURE").outcome).toEqual({ kind: "VERIFY" });
  });
});
