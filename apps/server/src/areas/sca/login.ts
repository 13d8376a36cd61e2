/**
 * SCA logins and the session they open: a login is started for a factor the
 * customer has (SMS_OTP and PASSKEY leave an ScaChallenge row; a TOTP code
 * is the app's) and completed with its proof. A wrong proof is a failed
 * login; failed logins reach the sandbox table's lockout steps, and a locked
 * customer is refused first. The platform reports its own security events
 * (record-event): a failed login counts the same, a completed password
 * reset clears the count, the lock and the session.
 */
import type { Schemas } from "@payments-sandbox/client";
import {
  SCA_SESSION_SECONDS,
  loginLockoutAt,
  scaCodeOutcome,
} from "@payments-sandbox/sandbox-rules";
import { one, q } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { ApiError, fieldError, invalidInput } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { CustomerRow } from "../customers/service.js";
import { answerCode, replaceScaChallenge, scaChallengeStore } from "./code-challenge.js";
import { activeFactors, passkeyOf, requireFactor } from "./factors.js";
import { accountLocked, lockOf, readLoginState, type LoginState } from "./login-state.js";
import type { ScaPasskeys } from "./passkeys.js";

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

export class ScaLogin {
  constructor(
    private readonly services: Services,
    private readonly passkeys: ScaPasskeys,
  ) {}

  /** POST /sca/login/start: starting again replaces the outstanding login challenge. */
  async startLogin(
    ctx: RequestContext,
    row: CustomerRow,
    input: Schemas["ScaLoginStartRequest"],
  ): Promise<Schemas["ScaLoginStart"]> {
    await requireFactor(this.services.data, ctx, row, input.factor);
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
    const [passkey] = await activeFactors(this.services.data, ctx, row.id, "PASSKEY");
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
    row: CustomerRow,
    input: Schemas["ScaLoginCompleteRequest"],
  ): Promise<Schemas["ScaLoginComplete"]> {
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
      await requireFactor(this.services.data, ctx, row, "TOTP");
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
      const [factor] = await activeFactors(this.services.data, ctx, row.id, "PASSKEY");
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
    row: CustomerRow,
    input: Schemas["RecordSecurityEventRequest"],
  ): Promise<Schemas["RecordSecurityEventResponse"]> {
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
}
