import type { RateRule } from "../../limits/rate-limit.js";

/**
 * Per-credential limits (documented in openapi.yaml). Windows slide; the
 * answer past a limit is 429 RATE_LIMITED with Retry-After.
 */
export const AUTH_RATE_LIMITS = {
  /** OTP reissues and passkey challenges. */
  challenge: { name: "auth-challenge", limit: 5, windowSeconds: 60 },
  /** Verification attempts (OTP first leg, OAUTH, PASSKEY): rapid reauthentication. */
  verifications: { name: "auth-verify", limit: 10, windowSeconds: 60 },
  /** Failed verifications (wrong OTP, rejected token or assertion). */
  failedVerifications: { name: "auth-verify-failed", limit: 5, windowSeconds: 15 * 60 },
} satisfies Record<string, RateRule>;
