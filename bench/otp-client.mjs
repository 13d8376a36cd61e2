// The client's side of an OTP login, as the bench scripts play it.
import * as portable from "@payments-sandbox/crypto";

/**
 * The verify request's body for the sandbox's magic code: a fresh TEK
 * (returned, to stamp the signed retry) and the code sealed to the target.
 */
export async function sealedOtpVerify(targetPublicKeyHex) {
  const tek = portable.generateP256KeyPair();
  const body = {
    type: "EMAIL_OTP",
    encryptedOtpBundle: await portable.sealOtpBundle({
      otpCode: "000000",
      tekPublicKeyHex: tek.publicKeyHex,
      targetPublicKeyHex,
    }),
  };
  return { tek, body };
}
