import type { VerificationTokenInput } from "@payments-sandbox/crypto";
import { otpOutcome, type OtpOutcome } from "@payments-sandbox/sandbox-rules";
import { openOtpBundle } from "./bundles.js";
import { issueVerificationToken } from "./verification-token.js";

/** What the first leg of an OTP login learns from its bundle. */
export type OtpAcceptance =
  | { accepted: true; publicKey: string; verificationToken: string }
  | { accepted: false; outcome: Exclude<OtpOutcome, { kind: "ACCEPT" }> };

/**
 * Opens an OTP bundle, lets the sandbox's OTP table judge its code and, if
 * it is accepted, signs the verification token that binds the bundle's TEK:
 * the first leg's crypto as one call, so the crypto thread wakes once per
 * login. A bundle that does not open throws CryptoError.
 */
export function acceptOtpBundle(
  bundle: string,
  targetPrivateKeyHex: string,
  token: Omit<VerificationTokenInput, "publicKey">,
  signingPrivateKeyHex: string,
): OtpAcceptance {
  const opened = openOtpBundle(bundle, targetPrivateKeyHex);
  const { outcome } = otpOutcome(opened.otpCode);
  if (outcome.kind !== "ACCEPT") return { accepted: false, outcome };
  return {
    accepted: true,
    publicKey: opened.publicKey,
    verificationToken: issueVerificationToken(
      { ...token, publicKey: opened.publicKey },
      signingPrivateKeyHex,
    ),
  };
}
