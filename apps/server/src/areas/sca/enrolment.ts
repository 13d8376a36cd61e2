/**
 * Enrolment of a customer's TOTP and PASSKEY factors, and their removal. An
 * enrolment is an ScaFactor row, PENDING from its start (carrying its
 * one-time-code state or its WebAuthn challenge) until confirmed, then
 * ACTIVE. One authenticator app and one passkey per customer.
 */
import { randomBytes } from "node:crypto";
import type { Schemas } from "@payments-sandbox/client";
import { issueCode } from "@payments-sandbox/sandbox-rules";
import { insert, one, q, run } from "../../db/query.js";
import { ApiError, fieldError, invalidInput, notFound } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import { newId } from "../../ids.js";
import type { CustomerRow } from "../customers/service.js";
import { answerCode, type CodeStore } from "./code-challenge.js";
import { activeFactors, factorView, type ScaFactor } from "./factors.js";
import type { ScaPasskeys } from "./passkeys.js";
import { RECOVERY_CODES, base32, recoveryCode } from "./totp-secrets.js";

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

export class ScaEnrolment {
  constructor(
    private readonly services: Services,
    private readonly passkeys: ScaPasskeys,
  ) {}

  /** POST /sca/factors: a new pending enrolment replaces any earlier one of its kind. */
  async startEnrollment(
    ctx: RequestContext,
    row: CustomerRow,
    input: Schemas["ScaFactorEnrollRequestOneOf"],
  ): Promise<Schemas["ScaFactorEnrollStartOneOf"]> {
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
    if ((await activeFactors(this.services.data, ctx, row.id, "PASSKEY")).length > 0) {
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
    row: CustomerRow,
    input: Schemas["ScaFactorConfirmRequestOneOf"],
  ): Promise<Schemas["ScaFactorConfirmResponseOneOf"]> {
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
  async deleteFactor(ctx: RequestContext, row: CustomerRow, credentialId: string) {
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
}
