/**
 * Embedded-wallet authentication: the OTP code, the OIDC token rules, and the legacy shortcuts
 * for passkey assertions and wallet signatures.
 */
import type { LegacyShortcutOutcome, OidcTokenOutcome, OtpOutcome } from "../outcomes.js";
import type { MagicTable } from "../types.js";

/** The one OTP code the sandbox accepts for EMAIL_OTP and SMS_OTP. */
export const SANDBOX_OTP_CODE = "000000";

/** An OIDC token's `iat` may be at most this many seconds before the request. */
export const OIDC_TOKEN_MAX_AGE_SECONDS = 60;
/** Clock skew tolerated on the sandbox OIDC `iat` check (both directions). */
export const OIDC_CLOCK_SKEW_SECONDS = 5;
/** The old fixed OIDC token of earlier sandboxes; now refused. */
export const LEGACY_OIDC_TOKEN = "sandbox-valid-oidc-token";
/** Legacy `signature` of a passkey assertion that skips WebAuthn checks. */
export const LEGACY_PASSKEY_SIGNATURE = "sandbox-valid-passkey-signature";
/** Legacy `Service-Wallet-Signature` header value accepted in place of a stamp. */
export const LEGACY_WALLET_SIGNATURE = "sandbox-valid-signature";

export const OTP_TABLE: MagicTable<OtpOutcome> = {
  id: "otp",
  title: "OTP code",
  description:
    "The one-time password of an `EMAIL_OTP` or `SMS_OTP` login. Nothing is sent by e-mail or SMS; the code is still sealed with HPKE and checked after real decryption, exactly as in production.",
  appliesTo: "`POST /auth/credentials/{id}/verify` for `EMAIL_OTP` and `SMS_OTP`",
  field: "`otp_code` inside the sealed `encryptedOtpBundle`",
  key: { kind: "exact" },
  rows: [
    {
      match: SANDBOX_OTP_CODE,
      outcome: { kind: "ACCEPT" },
      description: "The code is accepted",
    },
  ],
  other: {
    outcome: {
      kind: "REJECT",
      status: 401,
      errorCode: "UNAUTHORIZED",
      message: "Invalid OTP code",
      reason: "Invalid OTP code",
    },
    description: "401 `UNAUTHORIZED` with `reason` `Invalid OTP code`",
  },
  examples: [SANDBOX_OTP_CODE, "123456"],
};

const LEGACY_SHORTCUT_NOTE =
  "Legacy shortcuts are on by default; a server started with `SANDBOX_LEGACY_SHORTCUTS=false` refuses them and checks the value like any other.";

export const OIDC_TOKEN_TABLE: MagicTable<OidcTokenOutcome> = {
  id: "oidcToken",
  title: "OIDC token",
  description: `There is no fixed OAuth token: any JWT-shaped \`oidcToken\` is checked against the claim rules below; its signature segment may be a dummy unless the server has a key set for the issuer.`,
  appliesTo: "`POST /auth/credentials` and `POST /auth/credentials/{id}/verify` for `OAUTH`",
  field: "`oidcToken`",
  key: { kind: "exact" },
  rows: [
    {
      match: LEGACY_OIDC_TOKEN,
      outcome: {
        kind: "REJECT",
        status: 401,
        errorCode: "UNAUTHORIZED",
        message: "The OIDC token was rejected.",
        reason: `The literal ${LEGACY_OIDC_TOKEN} is no longer accepted; send a JWT-shaped OIDC token`,
      },
      description: "Refused: 401 `UNAUTHORIZED` (the old fixed token is no longer accepted)",
    },
  ],
  other: {
    outcome: { kind: "CHECK_CLAIMS" },
    description: "Checked against the claim rules",
  },
  examples: [LEGACY_OIDC_TOKEN, "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiIuLi4ifQ.c2lnbmF0dXJl"],
  notes: [
    "A token that is not three base64url segments with JSON header and payload: 400 `INVALID_INPUT`.",
    `Claims: \`iss\` a supported issuer; \`aud\` a non-empty string or a one-element string array; \`sub\` non-empty; \`iat\` numeric and at most ${OIDC_TOKEN_MAX_AGE_SECONDS} seconds before the request (${OIDC_CLOCK_SKEW_SECONDS} seconds of clock skew allowed either way); \`exp\` numeric and later than the request. Any failure: 401 \`UNAUTHORIZED\` with a \`reason\` naming the check.`,
    "Registration stores `iss`, `aud` and `sub`; verify requires the same three and a `nonce` equal to the lowercase hex SHA-256 of the exact `clientPublicKey` string.",
  ],
};

export const PASSKEY_SIGNATURE_TABLE: MagicTable<LegacyShortcutOutcome> = {
  id: "passkeySignature",
  title: "Passkey assertion signature",
  description:
    "Passkey logins are checked like production WebAuthn: credential id, challenge, origin and relying-party id, user-presence flag, signature and counter. One legacy value skips those checks.",
  appliesTo: "`POST /auth/credentials/{id}/verify` for `PASSKEY`",
  field: "`assertion.signature`",
  key: { kind: "exact" },
  rows: [
    {
      match: LEGACY_PASSKEY_SIGNATURE,
      outcome: { kind: "LEGACY_ACCEPT" },
      description:
        "WebAuthn checks are skipped; the `Request-Id` of a pending passkey challenge is still required and consumed",
    },
  ],
  other: {
    outcome: { kind: "VERIFY" },
    description: "Full WebAuthn verification",
  },
  examples: [LEGACY_PASSKEY_SIGNATURE],
  notes: [LEGACY_SHORTCUT_NOTE],
};

export const WALLET_SIGNATURE_TABLE: MagicTable<LegacyShortcutOutcome> = {
  id: "walletSignature",
  title: "Wallet signature",
  description:
    "The signed retry of an embedded-wallet action is checked as a real P-256 stamp over the exact pending `payloadToSign`, made by a key of an active session of the wallet (or the TEK for an OTP login). One legacy value is accepted instead of a stamp.",
  appliesTo:
    "Every signed retry: `POST /auth/credentials`, `DELETE /auth/credentials/{id}`, the OTP retry of `POST /auth/credentials/{id}/verify`, `POST /auth/sessions/{id}/refresh`, `DELETE /auth/sessions/{id}`, `PATCH /internal-accounts/{id}`, `POST /internal-accounts/{id}/export`",
  field: "the `Service-Wallet-Signature` header",
  key: { kind: "exact" },
  rows: [
    {
      match: LEGACY_WALLET_SIGNATURE,
      outcome: { kind: "LEGACY_ACCEPT" },
      description:
        "Accepted without a stamp; `Request-Id` must still name a pending, unexpired challenge and the body must match it",
    },
  ],
  other: {
    outcome: { kind: "VERIFY" },
    description: "Verified as a stamp",
  },
  examples: [LEGACY_WALLET_SIGNATURE],
  notes: [LEGACY_SHORTCUT_NOTE],
};
