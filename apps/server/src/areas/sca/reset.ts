/**
 * 2FA resets: a customer who lost a factor starts a reset, passes a liveness
 * check (the sandbox passes it a while after the start), and completes it.
 * Completion clears the lost TOTP or PASSKEY factor (the customer enrols a
 * new one), or makes the new mobile number the customer's verified SMS_OTP
 * factor. A customer starts at most SCA_RESET_MAX_PER_DAY in 24 hours (429).
 */
import { randomBytes } from "node:crypto";
import type { Schemas } from "@payments-sandbox/client";
import {
  SCA_RESET_LIVENESS_SECONDS,
  SCA_RESET_MAX_PER_DAY,
  SCA_RESET_WINDOW_SECONDS,
} from "@payments-sandbox/sandbox-rules";
import { insert, q, run, type Row } from "../../db/query.js";
import { ApiError, fieldError, invalidInput, notFound } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import { newId } from "../../ids.js";
import type { CustomerRow } from "../customers/service.js";
import { hasFactor, requireFactor, type ScaFactor } from "./factors.js";

const DAY_MS = 24 * 60 * 60 * 1000;

export class TwoFactorResets {
  constructor(private readonly services: Services) {}

  /** POST /sca/factors/reset */
  async startReset(
    ctx: RequestContext,
    row: CustomerRow,
    input: Schemas["TwoFactorResetStartRequest"],
  ): Promise<Schemas["TwoFactorResetStart"]> {
    await requireFactor(this.services.data, ctx, row, input.factor);
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

  private async resetRow(ctx: RequestContext, row: CustomerRow, resetId: string) {
    const reset = await this.services.data.one(
      q
        .selectFrom("ScaFactorReset")
        .selectAll()
        .where("id", "=", resetId)
        .where("platformId", "=", ctx.platformId)
        .where("customerId", "=", row.id),
    );
    if (!reset) throw notFound("REFERENCE_NOT_FOUND", `Reset ${resetId} not found`);
    return reset;
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
    row: CustomerRow,
    resetId: string,
  ): Promise<Schemas["TwoFactorResetStatus"]> {
    const reset = await this.resetRow(ctx, row, resetId);
    const status = TwoFactorResets.statusOf(reset, ctx.clock.now());
    const factor = reset.factor as ScaFactor;
    // The lost factor is cleared on completion: one enrolled after it is the replacement.
    const enrollmentStatus =
      factor === "SMS_OTP"
        ? null
        : status === "COMPLETED" && (await hasFactor(this.services.data, ctx, row, factor))
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
    row: CustomerRow,
    resetId: string,
    input: Schemas["TwoFactorResetCompleteRequest"] | undefined,
  ): Promise<void> {
    const reset = await this.resetRow(ctx, row, resetId);
    const now = ctx.clock.now();
    const status = TwoFactorResets.statusOf(reset, now);
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
