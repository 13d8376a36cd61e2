import * as portable from "@payments-sandbox/crypto";
import { CryptoError, StampError } from "@payments-sandbox/crypto";
import { describe, expect, it } from "vitest";
import { openOtpBundle } from "./bundles.js";
import { offThread } from "./off-thread.js";
import { verifyStamp } from "./stamps.js";

// The crypto thread must answer exactly as the same call on the request
// thread would: the same value, and for a bad input the same error class
// and kind, which decide the API's error code.

const PAYLOAD = JSON.stringify({ type: "ACTIVITY_TYPE_OTP_LOGIN", timestampMs: "1763800000000" });

describe("crypto on its own thread", () => {
  it("verifies a stamp as verifyStamp does, and refuses a bad one with the same StampError kind", async () => {
    const key = portable.generateP256KeyPair();
    const header = portable.createStamp(PAYLOAD, key.privateKeyHex);
    await expect(offThread("verifyStamp", header, PAYLOAD)).resolves.toEqual(
      verifyStamp(header, PAYLOAD),
    );

    const invalid = offThread("verifyStamp", header, `${PAYLOAD} `);
    await expect(invalid).rejects.toBeInstanceOf(StampError);
    await expect(invalid).rejects.toMatchObject({ kind: "INVALID" });

    const malformed = offThread("verifyStamp", "not-a-stamp", PAYLOAD);
    await expect(malformed).rejects.toBeInstanceOf(StampError);
    await expect(malformed).rejects.toMatchObject({ kind: "MALFORMED" });
  });

  it("opens an OTP bundle as openOtpBundle does, and a wrong key is a CryptoError", async () => {
    const target = portable.generateP256KeyPair();
    const tek = portable.generateP256KeyPair();
    const bundle = await portable.sealOtpBundle({
      otpCode: "123456",
      tekPublicKeyHex: tek.publicKeyHex,
      targetPublicKeyHex: target.publicKeyUncompressedHex,
    });
    const opened = await offThread("openOtpBundle", bundle, target.privateKeyHex);
    expect(opened).toEqual({ otpCode: "123456", publicKey: tek.publicKeyHex });
    expect(opened).toEqual(openOtpBundle(bundle, target.privateKeyHex));

    const other = portable.generateP256KeyPair();
    await expect(offThread("openOtpBundle", bundle, other.privateKeyHex)).rejects.toBeInstanceOf(
      CryptoError,
    );
  });

  it("answers calls made together, each with its own result", async () => {
    const keys = Array.from({ length: 20 }, () => portable.generateP256KeyPair());
    const headers = keys.map((key) => portable.createStamp(PAYLOAD, key.privateKeyHex));
    const signers = await Promise.all(headers.map((h) => offThread("verifyStamp", h, PAYLOAD)));
    expect(signers.map((s) => s.publicKey)).toEqual(keys.map((k) => k.publicKeyHex));
  });
});
