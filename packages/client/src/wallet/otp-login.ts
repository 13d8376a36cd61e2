import {
  generateP256KeyPair,
  sealOtpBundle,
  verifyOtpTargetBundle,
} from "@payments-sandbox/crypto";
import type { SandboxClient } from "../types.js";
import { ok, WalletFlowError } from "./errors.js";
import type { WalletSession } from "./keys.js";
import { signed } from "./signed-retries.js";

// An EMAIL_OTP or SMS_OTP login: the code is sealed to the enclave's target
// key with a fresh key (the TEK), which then signs the retry and the session.

export interface OtpLoginOptions {
  /**
   * The code the user received, or a function that asks for it once it has
   * been sent. The sandbox sends nothing: its code is always `000000`.
   */
  code: string | (() => string | Promise<string>);
  /**
   * The platform's OTP enclave public key (uncompressed hex) that signs each
   * target bundle. Without it, it is read from `GET /sandbox/keys`.
   */
  enclavePublicKey?: string;
}

/** The first leg's result: the code is sent; seal it to `targetPublic`. */
export interface OtpChallenge {
  credentialId: string;
  type: "EMAIL_OTP" | "SMS_OTP";
  /** The uncompressed P-256 key of this code, from the checked target bundle. */
  targetPublic: string;
}

/** The sandbox's published OTP enclave key (`GET /sandbox/keys`). */
export async function otpEnclavePublicKey(api: SandboxClient): Promise<string> {
  return ok(await api.GET("/sandbox/keys")).otpEnclavePublicKey;
}

/**
 * First leg of an OTP login: asks for a code (the sandbox sends none; its
 * code is `000000`) and checks the target bundle's signature by the enclave key.
 */
export async function startOtpLogin(
  api: SandboxClient,
  credentialId: string,
  options: Pick<OtpLoginOptions, "enclavePublicKey"> = {},
): Promise<OtpChallenge> {
  const challenge = ok(
    await api.POST("/auth/credentials/{id}/challenge", {
      params: { path: { id: credentialId } },
      body: {},
    }),
  );
  if (challenge.type !== "EMAIL_OTP" && challenge.type !== "SMS_OTP") {
    throw new WalletFlowError("otp-challenge", `credential ${credentialId} is ${challenge.type}`);
  }
  if (challenge.otpEncryptionTargetBundle === undefined) {
    throw new WalletFlowError("otp-challenge", "the challenge has no otpEncryptionTargetBundle");
  }
  const enclave = options.enclavePublicKey ?? (await otpEnclavePublicKey(api));
  let targetPublic: string;
  try {
    ({ targetPublic } = verifyOtpTargetBundle(challenge.otpEncryptionTargetBundle, enclave));
  } catch (err) {
    throw new WalletFlowError(
      "otp-challenge",
      "the OTP target bundle is not signed by the enclave key",
      {
        cause: err,
      },
    );
  }
  return { credentialId, type: challenge.type, targetPublic };
}

/**
 * Second leg of an OTP login: seals `code` with a fresh key (the TEK) to the
 * challenge's target, verifies it, stamps the 202's payload with the TEK and
 * retries. The TEK is the session's signing key.
 */
export async function completeOtpLogin(
  api: SandboxClient,
  challenge: OtpChallenge,
  code: string,
): Promise<WalletSession> {
  const tek = generateP256KeyPair();
  const encryptedOtpBundle = await sealOtpBundle({
    otpCode: code,
    tekPublicKeyHex: tek.publicKeyHex,
    targetPublicKeyHex: challenge.targetPublic,
  });
  const session = await signed(
    (header) =>
      api.POST("/auth/credentials/{id}/verify", {
        params: { path: { id: challenge.credentialId }, header },
        body: { type: challenge.type, encryptedOtpBundle },
      }),
    tek,
  );
  return { session, signingKey: tek };
}

/**
 * An EMAIL_OTP or SMS_OTP login, both legs: asks for a code, seals it, and
 * answers the signed retry. `code` may be a function that prompts for it.
 */
export async function otpLogin(
  api: SandboxClient,
  credentialId: string,
  options: OtpLoginOptions,
): Promise<WalletSession> {
  const challenge = await startOtpLogin(api, credentialId, options);
  const code = typeof options.code === "string" ? options.code : await options.code();
  return completeOtpLogin(api, challenge, code);
}
