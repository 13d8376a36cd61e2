import { base64urlDecode } from "@payments-sandbox/crypto";
import {
  OIDC_CLOCK_SKEW_SECONDS,
  OIDC_TOKEN_MAX_AGE_SECONDS,
  oidcTokenOutcome,
} from "@payments-sandbox/sandbox-rules";
import {
  compactVerify,
  createLocalJWKSet,
  createRemoteJWKSet,
  type CompactVerifyGetKey,
  type JSONWebKeySet,
} from "jose";
import type { AuthConfig } from "../../config.js";
import { sha256Hex } from "../../crypto/sha256.js";
import { ApiError, invalidInput, fieldError } from "../../errors.js";

/** The identity an OAUTH credential is registered with. */
export interface OidcIdentity {
  iss: string;
  aud: string;
  sub: string;
  email?: string;
}

type KeyGetter = CompactVerifyGetKey;

// Only asymmetric algorithms: a key set never holds a shared secret.
const ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "EdDSA",
];

const rejected = (reason: string) =>
  new ApiError(401, "UNAUTHORIZED", "The OIDC token was rejected.", { reason });

const malformed = (problem: string) =>
  invalidInput(`oidcToken is not a well-formed JWT: ${problem}`, {
    errors: [fieldError("body.oidcToken", problem)],
  });

const decoder = new TextDecoder("utf-8", { fatal: true });

function decodeSegment(segment: string, what: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(decoder.decode(base64urlDecode(segment)));
  } catch {
    throw malformed(`the ${what} is not base64url-encoded JSON`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw malformed(`the ${what} is not a JSON object`);
  }
  return parsed as Record<string, unknown>;
}

const nonEmptyString = (value: unknown): value is string =>
  typeof value === "string" && value !== "";

/**
 * Checks OIDC ID tokens by the sandbox rules (shape, issuer, audience,
 * subject, freshness, expiry, and on login the registered identity and the
 * nonce). Issuers with a configured key set are in production mode: the
 * token's signature is verified against that key set too.
 */
export class OidcVerifier {
  private readonly keySets = new Map<string, KeyGetter>();

  constructor(private readonly config: AuthConfig) {
    for (const [issuer, set] of Object.entries(config.oidcKeySets)) {
      this.keySets.set(
        issuer,
        "url" in set
          ? createRemoteJWKSet(new URL(set.url))
          : createLocalJWKSet(set.jwks as unknown as JSONWebKeySet),
      );
    }
  }

  /**
   * Verifies `token` at time `now`. With `login`, also requires the
   * registered identity and the nonce bound to `clientPublicKey`.
   */
  async verify(
    token: string,
    now: Date,
    login?: { registered: OidcIdentity; clientPublicKey: string },
  ): Promise<OidcIdentity> {
    const rule = oidcTokenOutcome(token).outcome;
    if (rule.kind === "REJECT") {
      throw new ApiError(rule.status, rule.errorCode, rule.message, { reason: rule.reason });
    }

    const parts = token.split(".");
    if (parts.length !== 3) throw malformed("expected three dot-separated segments");
    const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
    if (!/^[A-Za-z0-9_-]+$/.test(signaturePart)) {
      throw malformed("the signature segment is not base64url");
    }
    decodeSegment(headerPart, "header");
    const claims = decodeSegment(payloadPart, "payload");

    const { iss } = claims;
    if (!nonEmptyString(iss) || !this.config.oidcIssuers.includes(iss)) {
      throw rejected("Token iss is not a supported issuer");
    }
    const keys = this.keySets.get(iss);
    if (keys) {
      try {
        await compactVerify(token, keys, { algorithms: ALGORITHMS });
      } catch {
        throw rejected("Token signature does not verify against the issuer's key set");
      }
    }

    const aud = Array.isArray(claims.aud)
      ? claims.aud.length === 1
        ? claims.aud[0]
        : undefined
      : claims.aud;
    if (!nonEmptyString(aud)) {
      throw rejected("Token aud must be a non-empty string or a one-element string array");
    }
    const { sub } = claims;
    if (!nonEmptyString(sub)) throw rejected("Token sub is missing or empty");

    const nowSeconds = now.getTime() / 1000;
    const { iat, exp } = claims;
    if (typeof iat !== "number" || !Number.isFinite(iat)) {
      throw rejected("Token iat is missing or not a number");
    }
    if (nowSeconds - iat > OIDC_TOKEN_MAX_AGE_SECONDS + OIDC_CLOCK_SKEW_SECONDS) {
      throw rejected(`Token iat is older than ${OIDC_TOKEN_MAX_AGE_SECONDS} seconds`);
    }
    if (iat - nowSeconds > OIDC_CLOCK_SKEW_SECONDS) throw rejected("Token iat is in the future");
    if (typeof exp !== "number" || !Number.isFinite(exp)) {
      throw rejected("Token exp is missing or not a number");
    }
    if (exp <= nowSeconds) throw rejected("Token has expired");

    const identity: OidcIdentity = {
      iss,
      aud,
      sub,
      ...(nonEmptyString(claims.email) ? { email: claims.email } : {}),
    };
    if (login) {
      for (const claim of ["iss", "aud", "sub"] as const) {
        if (identity[claim] !== login.registered[claim]) {
          throw rejected(`Token ${claim} does not match the registered credential`);
        }
      }
      if (claims.nonce !== sha256Hex(login.clientPublicKey)) {
        throw rejected("Token nonce does not match clientPublicKey");
      }
    }
    return identity;
  }
}
