import { randomUUID } from "node:crypto";
import { CryptoError } from "@payments-sandbox/crypto";
import type { OtpTarget } from "../../crypto/bundles.js";
import { runCrypto } from "../../crypto/off-thread.js";
import type { OtpAcceptance } from "../../crypto/otp-acceptance.js";
import type { Database } from "../../db/database.js";
import { prepared, q, updateOf, type Row } from "../../db/query.js";
import type { SqlUpdate } from "../../db/sql.js";
import { ApiError, invalidInput, fieldError } from "../../errors.js";

export const otpRejected = (reason: string) =>
  new ApiError(401, "UNAUTHORIZED", "OTP verification failed.", { reason });

type AuthMethodRow = Row<"AuthMethod">;

const enclaveKeyOf = prepared((args: { id: string }) =>
  q.selectFrom("Platform").select("otpSigningPrivateKey").where("id", "=", args.id),
);
// A platform's enclave key is set when the platform is made and never
// changes, so each process reads it once (platform ids are never reused).
const enclaveKeys = new Map<string, string>();

/** The platform's OTP enclave signing key. */
async function enclaveKey(db: Database, platformId: string): Promise<string> {
  const known = enclaveKeys.get(platformId);
  if (known !== undefined) return known;
  const platform = await db.one(enclaveKeyOf({ id: platformId }));
  if (!platform) throw new Error(`platform ${platformId} not found`);
  if (enclaveKeys.size >= 10_000) enclaveKeys.clear();
  enclaveKeys.set(platformId, platform.otpSigningPrivateKey);
  return platform.otpSigningPrivateKey;
}

/**
 * A new code's target (a fresh key pair, and its bundle signed by the
 * platform's enclave key), made where runCrypto puts the rest of a login's
 * curve arithmetic: about a quarter of a challenge's CPU.
 */
export async function newOtpTarget(db: Database, method: AuthMethodRow): Promise<OtpTarget> {
  const key = await enclaveKey(db, method.platformId);
  return runCrypto("newOtpTarget", method.platformId, method.accountId, key);
}

/**
 * "Sends" the code: the credential's columns that keep the target's private
 * half (replacing any earlier one, so only the latest bundle works).
 */
export function otpTargetColumns(
  target: OtpTarget,
  now: Date,
  ttlSeconds: number,
): Pick<AuthMethodRow, "otpTargetPrivateKey" | "otpExpiresAt"> {
  return {
    otpTargetPrivateKey: target.privateKeyHex,
    otpExpiresAt: new Date(now.getTime() + ttlSeconds * 1000),
  };
}

/** {@link otpTargetColumns} written on an existing credential. */
export function storeOtpTarget(
  method: AuthMethodRow,
  target: OtpTarget,
  now: Date,
  ttlSeconds: number,
): SqlUpdate {
  return updateOf("AuthMethod", otpTargetColumns(target, now, ttlSeconds), {
    id: method.id,
    platformId: method.platformId,
  });
}

function checkBundleShape(bundle: string): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(bundle);
  } catch {
    parsed = undefined;
  }
  const shapeOk =
    typeof parsed === "object" &&
    parsed !== null &&
    typeof (parsed as Record<string, unknown>).encappedPublic === "string" &&
    typeof (parsed as Record<string, unknown>).ciphertext === "string";
  if (!shapeOk) {
    throw invalidInput(
      "encryptedOtpBundle must be a JSON string with encappedPublic and ciphertext",
      { errors: [fieldError("body.encryptedOtpBundle", "not an encrypted OTP bundle")] },
    );
  }
}

/** The first leg's result: the client's TEK, and the token binding it. */
export interface AcceptedOtp {
  tek: string;
  verificationToken: string;
}

/**
 * Opens the bundle with the pending target key, checks the code (the
 * sandbox decides through its OTP table) and signs the ES256 verification
 * token that binds the bundle's TEK, until `expiresAt`. A wrong, expired or
 * missing code is 401. The code is used up by {@link otpCodeClaim}, in the
 * step that goes on with the login.
 */
export async function acceptOtp(
  db: Database,
  method: AuthMethodRow,
  encryptedOtpBundle: string,
  now: Date,
  expiresAt: Date,
): Promise<AcceptedOtp> {
  checkBundleShape(encryptedOtpBundle);
  const targetKey = method.otpTargetPrivateKey;
  if (targetKey === null || method.otpExpiresAt === null) {
    throw otpRejected("No OTP code is pending: request one with the challenge operation");
  }
  if (method.otpExpiresAt.getTime() <= now.getTime()) throw otpRejected("OTP code has expired");

  const signingKey = await enclaveKey(db, method.platformId);
  let acceptance: OtpAcceptance;
  try {
    acceptance = await runCrypto(
      "acceptOtpBundle",
      encryptedOtpBundle,
      targetKey,
      {
        id: randomUUID(),
        verificationType: method.type === "SMS_OTP" ? "OTP_TYPE_SMS" : "OTP_TYPE_EMAIL",
        contact: method.nickname,
        organizationId: method.platformId,
        expiresAtMs: expiresAt.getTime(),
      },
      signingKey,
    );
  } catch (err) {
    if (err instanceof CryptoError) {
      throw otpRejected("encryptedOtpBundle does not open with the latest OTP target key");
    }
    throw err;
  }
  if (!acceptance.accepted) {
    const { outcome } = acceptance;
    throw new ApiError(outcome.status, outcome.errorCode, "OTP verification failed.", {
      reason: outcome.reason,
    });
  }
  return { tek: acceptance.publicKey, verificationToken: acceptance.verificationToken };
}

/**
 * The update that uses up the code {@link acceptOtp} accepted: it clears the
 * credential's target only while the target is still the one the code was
 * opened with, so only one request can use a code (the login's first leg
 * makes it the claim of its counted attempt).
 */
export function otpCodeClaim(method: AuthMethodRow): SqlUpdate {
  return updateOf(
    "AuthMethod",
    { otpTargetPrivateKey: null, otpExpiresAt: null },
    {
      id: method.id,
      platformId: method.platformId,
      otpTargetPrivateKey: method.otpTargetPrivateKey,
    },
  );
}
