import {
  verificationTokenSigningInput,
  type VerificationTokenInput,
} from "@payments-sandbox/crypto";
import { signCompact } from "./ecdsa.js";

/**
 * Issues the OTP verification token (ES256 JWT, raw r‖s signature, low S):
 * the claims are @payments-sandbox/crypto's, the signature node:crypto's. Verifiers
 * (@payments-sandbox/crypto, @turnkey/crypto, jose) accept it as they accept the
 * portable issuer's; only the signature bytes differ (random nonces).
 */
export function issueVerificationToken(
  input: VerificationTokenInput,
  signingPrivateKeyHex: string,
): string {
  const signingInput = verificationTokenSigningInput(input);
  const signature = signCompact(Buffer.from(signingInput, "utf8"), signingPrivateKeyHex);
  return `${signingInput}.${signature.toString("base64url")}`;
}
