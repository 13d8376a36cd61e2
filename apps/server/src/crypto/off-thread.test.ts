import * as portable from "@payments-sandbox/crypto";
import { CryptoError, StampError } from "@payments-sandbox/crypto";
import { describe, expect, it } from "vitest";
import {
  cryptoThreadNow,
  LoopLoad,
  onCryptoThread,
  runCrypto,
  THREAD_ABOVE_REQUESTS,
} from "./off-thread.js";
import { acceptOtpBundle } from "./otp-acceptance.js";
import { verifyStamp } from "./stamps.js";

// The crypto thread must answer exactly as the same call on the request
// thread would: the same value, and for a bad input the same error class
// and kind, which decide the API's error code.

const PAYLOAD = JSON.stringify({ type: "ACTIVITY_TYPE_OTP_LOGIN", timestampMs: "1763800000000" });

/** The claims of an email OTP's verification token, valid for an hour. */
const verificationClaims = () => ({
  id: "2f0d6f9e-0b6f-4d55-9d57-3f1a2b4c5d6e",
  verificationType: "OTP_TYPE_EMAIL" as const,
  contact: "user@example.com",
  organizationId: "Platform:1",
  expiresAtMs: Date.now() + 3_600_000,
});

describe("crypto on its own thread", () => {
  it("verifies a stamp as verifyStamp does, and refuses a bad one with the same StampError kind", async () => {
    const key = portable.generateP256KeyPair();
    const header = portable.createStamp(PAYLOAD, key.privateKeyHex);
    await expect(onCryptoThread("verifyStamp", header, PAYLOAD)).resolves.toEqual(
      verifyStamp(header, PAYLOAD),
    );

    const invalid = onCryptoThread("verifyStamp", header, `${PAYLOAD} `);
    await expect(invalid).rejects.toBeInstanceOf(StampError);
    await expect(invalid).rejects.toMatchObject({ kind: "INVALID" });

    const malformed = onCryptoThread("verifyStamp", "not-a-stamp", PAYLOAD);
    await expect(malformed).rejects.toBeInstanceOf(StampError);
    await expect(malformed).rejects.toMatchObject({ kind: "MALFORMED" });

    // A decoded stamp (as a signed retry sends it) is checked the same way,
    // its key included: an x with no point on the curve is MALFORMED.
    const decoded = portable.decodeStamp(header);
    await expect(onCryptoThread("verifyStamp", decoded, PAYLOAD)).resolves.toEqual({
      publicKey: key.publicKeyHex,
    });
    const noPoint = onCryptoThread(
      "verifyStamp",
      { ...decoded, publicKey: `02${"00".repeat(31)}01` },
      PAYLOAD,
    );
    await expect(noPoint).rejects.toBeInstanceOf(StampError);
    await expect(noPoint).rejects.toMatchObject({ kind: "MALFORMED" });
  });

  it("accepts an OTP bundle as acceptOtpBundle does: the TEK and a token binding it, or the code's rejection", async () => {
    const enclave = portable.generateP256KeyPair();
    const target = portable.generateP256KeyPair();
    const tek = portable.generateP256KeyPair();
    const token = verificationClaims();
    const seal = (otpCode: string) =>
      portable.sealOtpBundle({
        otpCode,
        tekPublicKeyHex: tek.publicKeyHex,
        targetPublicKeyHex: target.publicKeyUncompressedHex,
      });
    const accept = async (otpCode: string, key = target.privateKeyHex) =>
      onCryptoThread("acceptOtpBundle", await seal(otpCode), key, token, enclave.privateKeyHex);

    const accepted = await accept("000000");
    if (!accepted.accepted) throw new Error("the sandbox code was refused");
    expect(accepted.publicKey).toBe(tek.publicKeyHex);
    expect(
      portable.verifyVerificationToken(accepted.verificationToken, enclave.publicKeyHex),
    ).toMatchObject({ public_key: tek.publicKeyHex, organization_id: "Platform:1" });
    // The same claims as the direct call (the signature's nonce differs).
    const direct = acceptOtpBundle(
      await seal("000000"),
      target.privateKeyHex,
      token,
      enclave.privateKeyHex,
    );
    if (!direct.accepted) throw new Error("the sandbox code was refused");
    expect(accepted.verificationToken.split(".").slice(0, 2)).toEqual(
      direct.verificationToken.split(".").slice(0, 2),
    );

    await expect(accept("123456")).resolves.toEqual({
      accepted: false,
      outcome: expect.objectContaining({ status: 401, reason: "Invalid OTP code" }),
    });
    const other = portable.generateP256KeyPair();
    await expect(accept("000000", other.privateKeyHex)).rejects.toBeInstanceOf(CryptoError);
  });

  it("makes a code's target: a bundle the enclave key signed, whose private half opens what a client seals to it", async () => {
    const enclave = portable.generateP256KeyPair();
    const made = await onCryptoThread(
      "newOtpTarget",
      "Platform:1",
      "InternalAccount:1",
      enclave.privateKeyHex,
    );
    const { targetPublic } = portable.verifyOtpTargetBundle(
      made.bundle,
      enclave.publicKeyUncompressedHex,
    );
    const tek = portable.generateP256KeyPair();
    const sealed = await portable.sealOtpBundle({
      otpCode: "000000",
      tekPublicKeyHex: tek.publicKeyHex,
      targetPublicKeyHex: targetPublic,
    });
    const token = verificationClaims();
    const accepted = acceptOtpBundle(sealed, made.privateKeyHex, token, enclave.privateKeyHex);
    expect(accepted).toMatchObject({ accepted: true, publicKey: tek.publicKeyHex });
    // A new key pair each time.
    const again = await onCryptoThread(
      "newOtpTarget",
      "Platform:1",
      "InternalAccount:1",
      enclave.privateKeyHex,
    );
    expect(again.privateKeyHex).not.toBe(made.privateKeyHex);
  });

  it("answers calls made together, each with its own result", async () => {
    const keys = Array.from({ length: 20 }, () => portable.generateP256KeyPair());
    const headers = keys.map((key) => portable.createStamp(PAYLOAD, key.privateKeyHex));
    const signers = await Promise.all(
      headers.map((h) => onCryptoThread("verifyStamp", h, PAYLOAD)),
    );
    expect(signers.map((s) => s.publicKey)).toEqual(keys.map((k) => k.publicKeyHex));
  });
});

describe("where a crypto call runs", () => {
  it("goes to the crypto thread when the request thread was busy, or a burst of requests is in flight", () => {
    const idle = () => false;
    const busy = () => true;
    expect(cryptoThreadNow(1, idle)).toBe(false);
    expect(cryptoThreadNow(THREAD_ABOVE_REQUESTS, idle)).toBe(false);
    expect(cryptoThreadNow(THREAD_ABOVE_REQUESTS + 1, idle)).toBe(true);
    expect(cryptoThreadNow(1, busy)).toBe(true);
  });

  it("counts the request thread busy once most of a window was spent running, and idle again after an idle window", () => {
    const loop = (active: number, idle: number) => ({
      active,
      idle,
      utilization: active / (active + idle || 1),
    });
    const readings = [loop(0, 0)];
    const load = new LoopLoad(() => readings.at(-1)!, 100, 0.7);
    readings.push(loop(30, 170));
    expect(load.isBusy()).toBe(false);
    // Under the window's length: the last decision holds.
    readings.push(loop(80, 170));
    expect(load.isBusy()).toBe(false);
    readings.push(loop(180, 180));
    expect(load.isBusy()).toBe(true);
    readings.push(loop(190, 190));
    expect(load.isBusy()).toBe(true);
    readings.push(loop(230, 300));
    expect(load.isBusy()).toBe(false);
  });

  it("answers as the crypto thread does", async () => {
    const key = portable.generateP256KeyPair();
    const header = portable.createStamp(PAYLOAD, key.privateKeyHex);
    await expect(runCrypto("verifyStamp", header, PAYLOAD)).resolves.toEqual(
      await onCryptoThread("verifyStamp", header, PAYLOAD),
    );
    const malformed = runCrypto("verifyStamp", "not-a-stamp", PAYLOAD);
    await expect(malformed).rejects.toBeInstanceOf(StampError);
    await expect(malformed).rejects.toMatchObject({ kind: "MALFORMED" });
    const invalid = runCrypto("verifyStamp", header, `${PAYLOAD} `);
    await expect(invalid).rejects.toBeInstanceOf(StampError);
    await expect(invalid).rejects.toMatchObject({ kind: "INVALID" });
  });
});
