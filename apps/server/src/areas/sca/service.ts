/**
 * Strong customer authentication of a customer: its factors (enrolment and
 * removal), SCA logins and the session they open, failed-login lockout, and
 * 2FA resets. Every operation first finds the customer (404 for another
 * platform's or a deleted one) and answers 409 `CONFLICT` when it does not
 * use SCA (requirement.ts).
 *
 * Factors: `SMS_OTP` is the customer's verified phone number (contact
 * verification) and needs no row; `TOTP` and `PASSKEY` are ScaFactor rows,
 * PENDING from the enrolment start (carrying its one-time-code state or its
 * WebAuthn challenge) until confirmed, then ACTIVE. One passkey per customer.
 * Codes (SMS, TOTP) are answered through code-challenge.ts like every other
 * one-time code of the sandbox.
 */
import { randomBytes, randomInt } from "node:crypto";
import type { Schemas } from "@payments-sandbox/client";
import {
  SCA_RESET_LIVENESS_SECONDS,
  SCA_RESET_MAX_PER_DAY,
  SCA_RESET_WINDOW_SECONDS,
  SCA_SESSION_SECONDS,
  issueCode,
  loginLockoutAt,
  scaCodeOutcome,
} from "@payments-sandbox/sandbox-rules";
import { insert, one, q, run, type Row } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { ApiError, fieldError, invalidInput, notFound } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import { newId } from "../../ids.js";
import { channelStatus } from "../customers/contact-channels.js";
import type { CustomerRow, CustomerService } from "../customers/service.js";
import {
  answerCode,
  replaceScaChallenge,
  scaChallengeStore,
  type CodeStore,
} from "./code-challenge.js";
import type { ScaPasskey, ScaPasskeys } from "./passkeys.js";
import { accountLocked, lockOf, readLoginState, type LoginState } from "./login-state.js";
import { requiresSca, scaNotRequired } from "./requirement.js";

type ScaFactor = Schemas["ScaFactor"];
type FactorRow = Row<"ScaFactor">;

const DAY_MS = 24 * 60 * 60 * 1000;
const RECOVERY_CODES = 10;
const RECOVERY_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
const BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = "";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

function recoveryCode(): string {
  const group = () =>
    Array.from({ length: 4 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join(
      "",
    );
  return `${group()}-${group()}-${group()}`;
}

/** The store of a pending TOTP enrolment's code: voided by deleting the enrolment. */
function pendingFactorStore({ id, platformId }: { id: string; platformId: string }): CodeStore {
  return {
    *countWrong(spent) {
      const counted = yield* one(
        q
          .updateTable("ScaFactor")
          .set((eb) => ({ attempts: eb("attempts", "+", 1) }))
          .where("id", "=", id)
          .where("platformId", "=", platformId)
          .where("status", "=", "PENDING")
          .returning("attempts"),
      );
      if (counted && spent(counted.attempts)) {
        yield* run(
          q.deleteFrom("ScaFactor").where("id", "=", id).where("platformId", "=", platformId),
        );
      }
      return counted?.attempts;
    },
  };
}

const passkeyOf = (row: FactorRow): ScaPasskey => ({
  credentialId: row.credentialId ?? "",
  publicKey: row.publicKey ?? "",
  counter: row.counter,
  transports: row.transports ? (JSON.parse(row.transports) as string[]) : [],
});

function factorView(row: FactorRow): Schemas["ScaFactorView"] {
  return {
    factor: row.factor as ScaFactor,
    ...(row.credentialId !== null ? { credentialId: row.credentialId } : {}),
    ...(row.name !== null ? { name: row.name } : {}),
  };
}

/**
 * Adds one failed login for the customer and applies the lockout step it
 * reaches; answers the state after it.
 */
function* countFailedLogin(
  platformId: string,
  customerId: string,
  now: Date,
): SqlProgram<LoginState | undefined> {
  const counted = yield* one(
    q
      .insertInto("ScaLoginState")
      .values({ customerId, platformId, failedAttempts: 1, updatedAt: now })
      .onConflict((conflict) =>
        conflict.column("customerId").doUpdateSet((eb) => ({
          failedAttempts: eb("ScaLoginState.failedAttempts", "+", 1),
          updatedAt: now,
        })),
      )
      .returningAll(),
  );
  if (!counted) return undefined;
  const lockout = loginLockoutAt(counted.failedAttempts);
  if (lockout.kind === "NONE") return counted;
  return yield* one(
    q
      .updateTable("ScaLoginState")
      .set(
        lockout.kind === "SUSPENDED"
          ? { suspended: true, lockedUntil: null }
          : { lockedUntil: new Date(now.getTime() + lockout.seconds * 1000) },
      )
      .where("customerId", "=", customerId)
      .where("platformId", "=", platformId)
      .returningAll(),
  );
}

export class ScaService {
  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
    private readonly passkeys: ScaPasskeys,
  ) {}

  /** The customer, when it uses SCA: 404 for another platform's, 409 CONFLICT otherwise. */
  async scaCustomer(ctx: RequestContext, customerId: string): Promise<CustomerRow> {
    const row = await this.customers.getActiveRow(ctx, customerId);
    if (!requiresSca(row)) throw scaNotRequired(row);
    return row;
  }

  private activeFactors(ctx: RequestContext, customerId: string, factor?: ScaFactor) {
    let query = q
      .selectFrom("ScaFactor")
      .selectAll()
      .where("platformId", "=", ctx.platformId)
      .where("customerId", "=", customerId)
      .where("status", "=", "ACTIVE");
    if (factor) query = query.where("factor", "=", factor);
    return this.services.data.all(query.orderBy("createdAt").orderBy("id"));
  }

  /** Whether the customer can authenticate with this factor now. */
  private async hasFactor(ctx: RequestContext, row: CustomerRow, factor: ScaFactor) {
    if (factor === "SMS_OTP") return channelStatus(row, "PHONE") === "VERIFIED";
    return (await this.activeFactors(ctx, row.id, factor)).length > 0;
  }

  private async requireFactor(ctx: RequestContext, row: CustomerRow, factor: ScaFactor) {
    if (!(await this.hasFactor(ctx, row, factor))) {
      throw invalidInput(
        factor === "SMS_OTP"
          ? `Customer ${row.id} has no verified phone number for SMS_OTP; verify it with POST /customers/${row.id}/verify-phone`
          : `Customer ${row.id} has no enrolled ${factor} factor; enrol one with POST /sca/factors`,
        { errors: [fieldError("body.factor", "not a factor of this customer")] },
      );
    }
  }

  /** GET /sca/factors */
  async listFactors(ctx: RequestContext, customerId: string): Promise<Schemas["ScaFactorList"]> {
    const row = await this.scaCustomer(ctx, customerId);
    const factors = (await this.activeFactors(ctx, row.id)).map(factorView);
    return {
      factors: [
        ...(channelStatus(row, "PHONE") === "VERIFIED" ? [{ factor: "SMS_OTP" as const }] : []),
        ...factors,
      ],
    };
  }

  /** POST /sca/factors: a new pending enrolment replaces any earlier one of its kind. */
  async startEnrollment(
    ctx: RequestContext,
    customerId: string,
    input: Schemas["ScaFactorEnrollRequestOneOf"],
  ): Promise<Schemas["ScaFactorEnrollStartOneOf"]> {
    const row = await this.scaCustomer(ctx, customerId);
    const now = ctx.clock.now();
    const issued = issueCode("SCA", now);
    const pending = {
      id: newId("ScaFactor"),
      platformId: ctx.platformId,
      customerId: row.id,
      factor: input.type,
      status: "PENDING",
      attempts: 0,
      expiresAt: issued.expiresAt,
      createdAt: now,
      updatedAt: now,
    };
    const replacePending = () =>
      run(
        q
          .deleteFrom("ScaFactor")
          .where("platformId", "=", ctx.platformId)
          .where("customerId", "=", row.id)
          .where("factor", "=", input.type)
          .where("status", "=", "PENDING"),
      );
    const label = row.email ?? row.id;
    if (input.type === "TOTP") {
      const secret = randomBytes(20);
      const encoded = base32(secret);
      await this.services.data.transaction(function* () {
        yield* replacePending();
        yield* insert("ScaFactor", { ...pending, secret: secret.toString("hex") });
      });
      return {
        type: "TOTP",
        secret: secret.toString("hex"),
        secretBase32Encoded: encoded,
        totpUri: `otpauth://totp/Sandbox:${encodeURIComponent(label)}?secret=${encoded}&issuer=Sandbox`,
      };
    }
    if ((await this.activeFactors(ctx, row.id, "PASSKEY")).length > 0) {
      throw new ApiError(
        409,
        "PASSKEY_ALREADY_ENROLLED",
        `Customer ${row.id} already has a passkey; delete it with DELETE /sca/factors/{credentialId} first`,
      );
    }
    const challenge = this.passkeys.challenge();
    await this.services.data.transaction(function* () {
      yield* replacePending();
      yield* insert("ScaFactor", { ...pending, webauthnChallenge: challenge });
    });
    return {
      type: "PASSKEY",
      options: {
        challenge,
        rp: { id: this.passkeys.relyingPartyId, name: "Sandbox" },
        user: { id: Buffer.from(row.id).toString("base64url"), name: label, displayName: label },
        pubKeyCredParams: [
          { type: "public-key", alg: -7 },
          { type: "public-key", alg: -257 },
        ],
        timeout: issued.expiresAt.getTime() - now.getTime(),
        attestation: "none",
        authenticatorSelection: { residentKey: "preferred", userVerification: "preferred" },
        excludeCredentials: [],
      },
      allowedOrigins: this.passkeys.allowedOrigins,
      relyingPartyId: this.passkeys.relyingPartyId,
    };
  }

  /** POST /sca/factors/confirm */
  async confirmEnrollment(
    ctx: RequestContext,
    customerId: string,
    input: Schemas["ScaFactorConfirmRequestOneOf"],
  ): Promise<Schemas["ScaFactorConfirmResponseOneOf"]> {
    const row = await this.scaCustomer(ctx, customerId);
    const now = ctx.clock.now();
    const pendingOf = (factor: ScaFactor) =>
      this.services.data.one(
        q
          .selectFrom("ScaFactor")
          .selectAll()
          .where("platformId", "=", ctx.platformId)
          .where("customerId", "=", row.id)
          .where("factor", "=", factor)
          .where("status", "=", "PENDING"),
      );
    const noEnrolment = (factor: ScaFactor, why: string, field = "type") =>
      invalidInput(`${why}; start the ${factor} enrolment again with POST /sca/factors`, {
        errors: [fieldError(`body.${field}`, `no ${factor} enrolment is pending`)],
      });

    if (input.type === "TOTP") {
      const pending = await pendingOf("TOTP");
      if (!pending || pending.secret !== input.secret) {
        throw noEnrolment("TOTP", "No TOTP enrolment with this secret is pending", "secret");
      }
      await answerCode(this.services.data, {
        kind: "SCA",
        issued: { expiresAt: pending.expiresAt ?? now, attempts: pending.attempts },
        code: input.code,
        now,
        store: pendingFactorStore(pending),
        unusable: (why) =>
          noEnrolment(
            "TOTP",
            why === "EXPIRED" ? "The TOTP enrolment expired" : "Too many wrong codes",
          ),
      });
      const confirmed = await this.services.data.transaction(function* () {
        const activated = yield* run(
          q
            .updateTable("ScaFactor")
            .set({ status: "ACTIVE", expiresAt: null, updatedAt: now, name: "Authenticator app" })
            .where("id", "=", pending.id)
            .where("platformId", "=", pending.platformId)
            .where("status", "=", "PENDING"),
        );
        if (activated === 0) return false;
        // One authenticator app per customer: the new one replaces the old.
        yield* run(
          q
            .deleteFrom("ScaFactor")
            .where("platformId", "=", pending.platformId)
            .where("customerId", "=", pending.customerId)
            .where("factor", "=", "TOTP")
            .where("status", "=", "ACTIVE")
            .where("id", "!=", pending.id),
        );
        return true;
      });
      if (!confirmed) throw noEnrolment("TOTP", "The TOTP enrolment was already confirmed");
      return {
        type: "TOTP",
        recoveryCodes: Array.from({ length: RECOVERY_CODES }, recoveryCode),
      };
    }

    const origin = this.passkeys.checkOrigin(input.origin);
    const pending = await pendingOf("PASSKEY");
    if (!pending || pending.webauthnChallenge === null) {
      throw noEnrolment("PASSKEY", "No passkey enrolment is pending");
    }
    if (pending.expiresAt === null || now >= pending.expiresAt) {
      throw noEnrolment("PASSKEY", "The passkey enrolment expired");
    }
    const passkey = await this.passkeys.register(
      pending.webauthnChallenge,
      origin,
      input.credential,
    );
    const activated = await this.services.data.transaction(function* () {
      const existing = yield* one(
        q
          .selectFrom("ScaFactor")
          .select("id")
          .where("platformId", "=", pending.platformId)
          .where("customerId", "=", pending.customerId)
          .where("factor", "=", "PASSKEY")
          .where("status", "=", "ACTIVE"),
      );
      if (existing) return "ALREADY" as const;
      return yield* one(
        q
          .updateTable("ScaFactor")
          .set({
            status: "ACTIVE",
            credentialId: passkey.credentialId,
            publicKey: passkey.publicKey,
            counter: passkey.counter,
            transports: JSON.stringify(passkey.transports),
            name: "Passkey",
            webauthnChallenge: null,
            expiresAt: null,
            updatedAt: now,
          })
          .where("id", "=", pending.id)
          .where("platformId", "=", pending.platformId)
          .where("status", "=", "PENDING")
          .returningAll(),
      );
    });
    if (activated === "ALREADY") {
      throw new ApiError(
        409,
        "PASSKEY_ALREADY_ENROLLED",
        `Customer ${row.id} already has a passkey`,
      );
    }
    if (!activated) throw noEnrolment("PASSKEY", "The passkey enrolment was already confirmed");
    return { type: "PASSKEY", factor: factorView(activated) };
  }

  /** DELETE /sca/factors/{credentialId} */
  async deleteFactor(ctx: RequestContext, customerId: string, credentialId: string) {
    const row = await this.scaCustomer(ctx, customerId);
    const deleted = await this.services.data.execute(
      q
        .deleteFrom("ScaFactor")
        .where("platformId", "=", ctx.platformId)
        .where("customerId", "=", row.id)
        .where("status", "=", "ACTIVE")
        .where("credentialId", "=", credentialId),
    );
    if (deleted === 0) {
      throw notFound("REFERENCE_NOT_FOUND", `Customer ${row.id} has no factor ${credentialId}`);
    }
  }

  /** POST /sca/login/start: starting again replaces the outstanding login challenge. */
  async startLogin(
    ctx: RequestContext,
    customerId: string,
    input: Schemas["ScaLoginStartRequest"],
  ): Promise<Schemas["ScaLoginStart"]> {
    const row = await this.scaCustomer(ctx, customerId);
    await this.requireFactor(ctx, row, input.factor);
    if (input.factor === "TOTP") return { factor: "TOTP" };
    const now = ctx.clock.now();
    const webauthnChallenge = input.factor === "PASSKEY" ? this.passkeys.challenge() : null;
    const challenge = await replaceScaChallenge(
      this.services.data,
      {
        platformId: ctx.platformId,
        customerId: row.id,
        purpose: "LOGIN",
        subjectId: row.id,
        factor: input.factor,
        webauthnChallenge,
      },
      now,
    );
    if (input.factor === "SMS_OTP") {
      return {
        factor: "SMS_OTP",
        challengeId: challenge.id,
        expiresAt: challenge.expiresAt.toISOString(),
      };
    }
    const [passkey] = await this.activeFactors(ctx, row.id, "PASSKEY");
    return {
      factor: "PASSKEY",
      passkeyOptions: {
        challenge: webauthnChallenge,
        rpId: this.passkeys.relyingPartyId,
        allowCredentials: passkey
          ? [
              {
                type: "public-key",
                id: passkey.credentialId,
                transports: passkeyOf(passkey).transports,
              },
            ]
          : [],
        timeout: challenge.expiresAt.getTime() - now.getTime(),
        userVerification: "preferred",
      },
      allowedOrigins: this.passkeys.allowedOrigins,
      relyingPartyId: this.passkeys.relyingPartyId,
    };
  }

  /**
   * POST /sca/login/complete. A wrong proof counts as a failed login (and
   * against the login's code); a locked customer is refused before any check.
   */
  async completeLogin(
    ctx: RequestContext,
    customerId: string,
    input: Schemas["ScaLoginCompleteRequest"],
  ): Promise<Schemas["ScaLoginComplete"]> {
    const row = await this.scaCustomer(ctx, customerId);
    const now = ctx.clock.now();
    const lock = lockOf(await readLoginState(this.services.data, ctx, row.id), now);
    if (lock.locked) throw accountLocked(lock);
    const platformId = ctx.platformId;
    const failed = () => countFailedLogin(platformId, row.id, now);
    const noLogin = (why: string) =>
      invalidInput(`${why}; start the login again with POST /sca/login/start`, {
        errors: [fieldError("body.factor", "no login is pending for this factor")],
      });

    // The contract's anyOf asks for a proof; the factor decides which one.
    if (
      input.factor === "PASSKEY" ? !input.passkeyAssertion || !input.origin : input.code == null
    ) {
      const field = input.factor === "PASSKEY" ? "passkeyAssertion" : "code";
      throw invalidInput(
        input.factor === "PASSKEY"
          ? "A PASSKEY login is completed with passkeyAssertion and origin"
          : `A ${input.factor} login is completed with its code`,
        { errors: [fieldError(`body.${field}`, "required for this factor")] },
      );
    }
    if (input.factor === "TOTP") {
      await this.requireFactor(ctx, row, "TOTP");
      // A TOTP code is the app's, not one the sandbox issued: it has no expiry
      // or attempts of its own (the SCA code table decides it; a wrong one is
      // a failed login).
      const { outcome } = scaCodeOutcome(input.code);
      if (outcome.kind === "REJECT") {
        await this.services.data.transaction(failed);
        throw new ApiError(outcome.status, outcome.errorCode, outcome.message, {
          details: { errors: [fieldError("body.code", "not the authenticator's code")] },
        });
      }
      return this.openSession(ctx, row.id, now);
    }

    const pending = await this.services.data.one(
      q
        .selectFrom("ScaChallenge")
        .selectAll()
        .where("platformId", "=", ctx.platformId)
        .where("customerId", "=", row.id)
        .where("purpose", "=", "LOGIN")
        .where("subjectId", "=", row.id),
    );
    if (!pending || pending.factor !== input.factor) {
      throw noLogin(`No ${input.factor} login is pending`);
    }
    if (input.factor === "SMS_OTP") {
      if (input.challengeId !== pending.id) {
        throw invalidInput("challengeId is not the pending login's", {
          errors: [fieldError("body.challengeId", "not the pending login's challengeId")],
        });
      }
      const store = scaChallengeStore(pending);
      await answerCode(this.services.data, {
        kind: "SCA",
        issued: pending,
        code: input.code,
        now,
        store: {
          *countWrong(spent) {
            yield* failed();
            return yield* store.countWrong(spent);
          },
        },
        unusable: (why) =>
          noLogin(why === "EXPIRED" ? "The login code expired" : "Too many wrong codes"),
      });
    } else {
      if (now >= pending.expiresAt) throw noLogin("The passkey login expired");
      const [factor] = await this.activeFactors(ctx, row.id, "PASSKEY");
      if (!factor || pending.webauthnChallenge === null) throw noLogin("The passkey was removed");
      const origin = this.passkeys.checkOrigin(input.origin);
      let counter: number;
      try {
        counter = await this.passkeys.authenticate(
          passkeyOf(factor),
          pending.webauthnChallenge,
          origin,
          input.passkeyAssertion ?? {},
        );
      } catch (err) {
        await this.services.data.transaction(failed);
        throw err;
      }
      await this.services.data.execute(
        q
          .updateTable("ScaFactor")
          .set({ counter, updatedAt: now })
          .where("id", "=", factor.id)
          .where("platformId", "=", factor.platformId),
      );
    }
    const consumed = await this.services.data.execute(
      q
        .deleteFrom("ScaChallenge")
        .where("id", "=", pending.id)
        .where("platformId", "=", pending.platformId),
    );
    if (consumed === 0) throw noLogin("The login was already completed");
    return this.openSession(ctx, row.id, now);
  }

  private async openSession(
    ctx: RequestContext,
    customerId: string,
    now: Date,
  ): Promise<Schemas["ScaLoginComplete"]> {
    const sessionExpiresAt = new Date(now.getTime() + SCA_SESSION_SECONDS * 1000);
    await this.services.data.execute(
      q
        .insertInto("ScaLoginState")
        .values({ customerId, platformId: ctx.platformId, sessionExpiresAt, updatedAt: now })
        .onConflict((conflict) =>
          conflict.column("customerId").doUpdateSet({ sessionExpiresAt, updatedAt: now }),
        ),
    );
    return { status: "SUCCESS", sessionExpiresAt: sessionExpiresAt.toISOString() };
  }

  /** POST /sca/record-event */
  async recordEvent(
    ctx: RequestContext,
    customerId: string,
    input: Schemas["RecordSecurityEventRequest"],
  ): Promise<Schemas["RecordSecurityEventResponse"]> {
    const row = await this.scaCustomer(ctx, customerId);
    const now = ctx.clock.now();
    const platformId = ctx.platformId;
    let state: LoginState | undefined;
    if (input.eventType === "FAILED_LOGIN_ATTEMPT") {
      const lock = lockOf(await readLoginState(this.services.data, ctx, row.id), now);
      if (lock.locked) throw accountLocked(lock);
      state = await this.services.data.transaction(() => countFailedLogin(platformId, row.id, now));
    } else {
      const cleared = {
        sessionExpiresAt: null,
        failedAttempts: 0,
        lockedUntil: null,
        suspended: false,
        updatedAt: now,
      };
      state = await this.services.data.transaction(() =>
        one(
          q
            .insertInto("ScaLoginState")
            .values({ customerId: row.id, platformId, ...cleared })
            .onConflict((conflict) => conflict.column("customerId").doUpdateSet(cleared))
            .returningAll(),
        ),
      );
    }
    const lock = lockOf(state, now);
    return {
      eventType: input.eventType,
      suspended: lock.suspended,
      lockedUntil: lock.lockedUntil?.toISOString() ?? null,
      failedAttempts: lock.failedAttempts,
    };
  }

  /** POST /sca/factors/reset */
  async startReset(
    ctx: RequestContext,
    customerId: string,
    input: Schemas["TwoFactorResetStartRequest"],
  ): Promise<Schemas["TwoFactorResetStart"]> {
    const row = await this.scaCustomer(ctx, customerId);
    await this.requireFactor(ctx, row, input.factor);
    const now = ctx.clock.now();
    const recent = await this.services.data.all(
      q
        .selectFrom("ScaFactorReset")
        .select("createdAt")
        .where("platformId", "=", ctx.platformId)
        .where("customerId", "=", row.id)
        .where("createdAt", ">", new Date(now.getTime() - DAY_MS))
        .orderBy("createdAt"),
    );
    if (recent.length >= SCA_RESET_MAX_PER_DAY) {
      const oldest = recent[0]!.createdAt;
      const retryAfter = Math.max(1, Math.ceil((oldest.getTime() + DAY_MS - now.getTime()) / 1000));
      throw new ApiError(
        429,
        "RATE_LIMITED",
        `Customer ${row.id} started ${SCA_RESET_MAX_PER_DAY} resets in the last 24 hours`,
        { headers: { "Retry-After": String(retryAfter) } },
      );
    }
    const reset = {
      id: newId("ScaFactorReset"),
      platformId: ctx.platformId,
      customerId: row.id,
      factor: input.factor,
      livenessAccessToken: `liveness_${randomBytes(24).toString("base64url")}`,
      livenessPassesAt: new Date(now.getTime() + SCA_RESET_LIVENESS_SECONDS * 1000),
      expiresAt: new Date(now.getTime() + SCA_RESET_WINDOW_SECONDS * 1000),
      createdAt: now,
    };
    await this.services.data.transaction(() => insert("ScaFactorReset", reset));
    return {
      resetId: reset.id,
      livenessAccessToken: reset.livenessAccessToken,
      expiresAt: reset.expiresAt.toISOString(),
    };
  }

  private async resetRow(ctx: RequestContext, customerId: string, resetId: string) {
    const row = await this.scaCustomer(ctx, customerId);
    const reset = await this.services.data.one(
      q
        .selectFrom("ScaFactorReset")
        .selectAll()
        .where("id", "=", resetId)
        .where("platformId", "=", ctx.platformId)
        .where("customerId", "=", row.id),
    );
    if (!reset) throw notFound("REFERENCE_NOT_FOUND", `Reset ${resetId} not found`);
    return { row, reset };
  }

  private static statusOf(reset: Row<"ScaFactorReset">, now: Date) {
    if (reset.completedAt !== null) return "COMPLETED" as const;
    if (now >= reset.expiresAt) return "EXPIRED" as const;
    if (now >= reset.livenessPassesAt) return "LIVENESS_PASSED" as const;
    return "INITIATED" as const;
  }

  /** GET /sca/factors/reset/{resetId} */
  async resetStatus(
    ctx: RequestContext,
    customerId: string,
    resetId: string,
  ): Promise<Schemas["TwoFactorResetStatus"]> {
    const { row, reset } = await this.resetRow(ctx, customerId, resetId);
    const status = ScaService.statusOf(reset, ctx.clock.now());
    const factor = reset.factor as ScaFactor;
    // The lost factor is cleared on completion: one enrolled after it is the replacement.
    const enrollmentStatus =
      factor === "SMS_OTP"
        ? null
        : status === "COMPLETED" && (await this.hasFactor(ctx, row, factor))
          ? "COMPLETED"
          : "PENDING";
    return {
      status,
      factor,
      enrollmentStatus,
      expiresAt: reset.expiresAt.toISOString(),
      completedAt: reset.completedAt?.toISOString() ?? null,
    };
  }

  /** POST /sca/factors/reset/{resetId}/complete */
  async completeReset(
    ctx: RequestContext,
    customerId: string,
    resetId: string,
    input: Schemas["TwoFactorResetCompleteRequest"] | undefined,
  ): Promise<void> {
    const { row, reset } = await this.resetRow(ctx, customerId, resetId);
    const now = ctx.clock.now();
    const status = ScaService.statusOf(reset, now);
    if (status !== "LIVENESS_PASSED") {
      throw invalidInput(
        status === "INITIATED"
          ? `The liveness check of reset ${reset.id} has not passed yet; poll GET /sca/factors/reset/${reset.id}`
          : `Reset ${reset.id} is ${status}; start a new one with POST /sca/factors/reset`,
      );
    }
    const phone =
      reset.factor === "SMS_OTP"
        ? input?.mobile
          ? `${input.mobile.countryCode}${input.mobile.number}`
          : undefined
        : null;
    if (phone === undefined) {
      throw invalidInput("An SMS_OTP reset needs the new mobile number", {
        errors: [fieldError("body.mobile", "required for an SMS_OTP reset")],
      });
    }
    const completed = await this.services.data.transaction(function* () {
      const claimed = yield* run(
        q
          .updateTable("ScaFactorReset")
          .set({ completedAt: now })
          .where("id", "=", reset.id)
          .where("platformId", "=", reset.platformId)
          .where("completedAt", "is", null),
      );
      if (claimed === 0) return false;
      if (phone !== null) {
        // The new number is the customer's, verified by the reset's liveness check.
        yield* run(
          q
            .updateTable("Customer")
            .set({ phoneNumber: phone, verifiedPhoneNumber: phone, updatedAt: now })
            .where("id", "=", row.id)
            .where("platformId", "=", row.platformId)
            .where("deletedAt", "is", null),
        );
      } else {
        yield* run(
          q
            .deleteFrom("ScaFactor")
            .where("platformId", "=", row.platformId)
            .where("customerId", "=", row.id)
            .where("factor", "=", reset.factor),
        );
      }
      return true;
    });
    if (!completed) throw invalidInput(`Reset ${reset.id} is already COMPLETED`);
  }
}
