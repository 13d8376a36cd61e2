import { signCompact, verifyCompact } from "./ecdsa.js";
import { base64urlDecode, base64urlEncode, utf8, utf8Decode } from "./encoding.js";
import { CryptoError } from "./errors.js";
import { parsePublicKey } from "./keys.js";

export type VerificationType = "OTP_TYPE_EMAIL" | "OTP_TYPE_SMS";

const VERIFICATION_TYPES: readonly string[] = ["OTP_TYPE_EMAIL", "OTP_TYPE_SMS"];

/**
 * Claims of the OTP verification token. Every claim is a string, including
 * `exp` (milliseconds since the epoch, not RFC 7519 seconds): that is what
 * @turnkey/crypto's verifyOtpVerificationToken requires.
 */
export interface VerificationTokenClaims {
  id: string;
  verification_type: VerificationType;
  contact: string;
  organization_id: string;
  public_key: string;
  exp: string;
}

export interface VerificationTokenInput {
  id: string;
  verificationType: VerificationType;
  contact: string;
  organizationId: string;
  /** The client's TEK (public key hex). */
  publicKey: string;
  expiresAtMs: number;
}

const HEADER = { alg: "ES256", typ: "JWT" } as const;

/**
 * The token's `header.payload` (base64url JSON of each), after checking the
 * input: what the ES256 signature covers. The server signs it with node:crypto.
 */
export function verificationTokenSigningInput(input: VerificationTokenInput): string {
  if (!VERIFICATION_TYPES.includes(input.verificationType)) {
    throw new CryptoError(`unknown verification type ${JSON.stringify(input.verificationType)}`);
  }
  if (!Number.isSafeInteger(input.expiresAtMs) || input.expiresAtMs <= 0) {
    throw new CryptoError("expiresAtMs must be a positive integer of milliseconds");
  }
  const claims: VerificationTokenClaims = {
    id: input.id,
    verification_type: input.verificationType,
    contact: input.contact,
    organization_id: input.organizationId,
    public_key: input.publicKey,
    exp: String(input.expiresAtMs),
  };
  return `${base64urlEncode(JSON.stringify(HEADER))}.${base64urlEncode(JSON.stringify(claims))}`;
}

/** Issues the ES256 JWT (raw r||s signature) binding an OTP success to the TEK. */
export function issueVerificationToken(
  input: VerificationTokenInput,
  signingPrivateKeyHex: string,
): string {
  const signingInput = verificationTokenSigningInput(input);
  return `${signingInput}.${base64urlEncode(signCompact(utf8(signingInput), signingPrivateKeyHex))}`;
}

function decodeJsonPart(part: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8Decode(base64urlDecode(part)));
  } catch (cause) {
    throw new CryptoError(`verification token ${what} is not base64url JSON`, { cause });
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new CryptoError(`verification token ${what} must be a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

/**
 * Verifies the token's ES256 signature with the given key (either form) and
 * returns its claims. Expiry is NOT checked here; use
 * isVerificationTokenExpired with the caller's clock.
 */
export function verifyVerificationToken(
  token: string,
  publicKeyHex: string,
): VerificationTokenClaims {
  const key = parsePublicKey(publicKeyHex);
  if (typeof token !== "string") throw new CryptoError("verification token must be a string");
  const parts = token.split(".");
  if (parts.length !== 3) throw new CryptoError("verification token must have 3 parts");
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];

  // Pin the algorithm so "none"/HS256 tokens are rejected explicitly.
  const header = decodeJsonPart(headerPart, "header");
  if (header.alg !== "ES256") throw new CryptoError("verification token alg must be ES256");
  if (header.typ !== undefined && header.typ !== "JWT") {
    throw new CryptoError("verification token typ must be JWT");
  }

  let signature: Uint8Array;
  try {
    signature = base64urlDecode(signaturePart);
  } catch (cause) {
    throw new CryptoError("verification token signature is not base64url", { cause });
  }
  if (signature.length !== 64) {
    throw new CryptoError("verification token signature must be 64 bytes (r||s)");
  }
  if (!verifyCompact(signature, utf8(`${headerPart}.${payloadPart}`), key)) {
    throw new CryptoError("verification token signature is invalid");
  }

  const payload = decodeJsonPart(payloadPart, "payload");
  const fields = ["id", "verification_type", "contact", "organization_id", "public_key", "exp"];
  for (const field of fields) {
    if (typeof payload[field] !== "string" || payload[field] === "") {
      throw new CryptoError(`verification token is missing string claim "${field}"`);
    }
  }
  const claims = payload as unknown as VerificationTokenClaims;
  if (!VERIFICATION_TYPES.includes(claims.verification_type)) {
    throw new CryptoError("verification token has an unknown verification_type");
  }
  if (!/^\d+$/.test(claims.exp)) {
    throw new CryptoError("verification token exp must be milliseconds since the epoch");
  }
  return claims;
}

/** True once `nowMs` has reached the token's `exp` (RFC 7519: valid only before exp). */
export function isVerificationTokenExpired(
  claims: Pick<VerificationTokenClaims, "exp">,
  nowMs: number,
): boolean {
  const expMs = Number(claims.exp);
  // A non-numeric exp is treated as expired rather than as "never expires".
  return !Number.isFinite(expMs) || nowMs >= expMs;
}
