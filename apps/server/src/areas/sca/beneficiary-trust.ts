/**
 * Trusted beneficiaries: a customer who uses SCA marks one of its external
 * accounts as trusted (or removes the mark) by answering an SCA challenge.
 * Quotes paying a trusted beneficiary need no per-payment challenge
 * (requirement.ts), and the platform cannot delete a trusted account (409
 * `BENEFICIARY_TRUSTED`) until it is untrusted; the customer's agent can, and
 * the trust goes with it (external-accounts/service.ts).
 *
 * The start issues an SMS_OTP challenge, an ScaChallenge row per account and
 * direction (starting again replaces it); the confirmation answers it through
 * code-challenge.ts and writes the mark in the same transaction that
 * consumes the challenge.
 */
import type { Schemas } from "@payments-sandbox/client";
import { one, q, run } from "../../db/query.js";
import { fieldError, invalidInput } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { CustomerService } from "../customers/service.js";
import type { ExternalAccountService } from "../external-accounts/service.js";
import { answerCode, replaceScaChallenge, scaChallengeStore } from "./code-challenge.js";
import { requiresSca, scaNotRequired } from "./requirement.js";
import { ApiError } from "../../errors.js";

export type TrustChange = "TRUST" | "UNTRUST";

const PATH: Record<TrustChange, string> = { TRUST: "trust", UNTRUST: "untrust" };

export class BeneficiaryTrustService {
  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
    private readonly externalAccounts: ExternalAccountService,
  ) {}

  /** The customer's account (404 otherwise) when its customer uses SCA (409 CONFLICT otherwise). */
  private async beneficiary(ctx: RequestContext, externalAccountId: string) {
    const account = await this.externalAccounts.ownedRow(ctx, "customers", externalAccountId);
    if (account.customerId === null) {
      throw new ApiError(
        409,
        "CONFLICT",
        `External account ${account.id} has no customer to authenticate`,
      );
    }
    const customer = await this.customers.getActiveRow(ctx, account.customerId);
    if (!requiresSca(customer)) throw scaNotRequired(customer);
    return { account, customer };
  }

  /** POST .../trust and .../untrust */
  async start(
    ctx: RequestContext,
    externalAccountId: string,
    change: TrustChange,
  ): Promise<Schemas["BeneficiaryTrustStart"]> {
    const { account, customer } = await this.beneficiary(ctx, externalAccountId);
    const challenge = await replaceScaChallenge(
      this.services.data,
      {
        platformId: ctx.platformId,
        customerId: customer.id,
        purpose: change,
        subjectId: account.id,
        factor: "SMS_OTP",
        webauthnChallenge: null,
      },
      ctx.clock.now(),
    );
    return {
      scaChallenge: {
        id: challenge.id,
        expiresAt: challenge.expiresAt.toISOString(),
        factor: "SMS_OTP",
        availableFactors: ["SMS_OTP"],
      },
    };
  }

  /** POST .../trust/confirm and .../untrust/confirm */
  async confirm(
    ctx: RequestContext,
    externalAccountId: string,
    change: TrustChange,
    input: Schemas["BeneficiaryTrustConfirmRequest"],
  ): Promise<Schemas["BeneficiaryTrustConfirm"]> {
    const { account, customer } = await this.beneficiary(ctx, externalAccountId);
    const now = ctx.clock.now();
    const path = `/customers/external-accounts/${account.id}/${PATH[change]}`;
    const noChallenge = (why: string) =>
      invalidInput(`${why}; start again with POST ${path}`, {
        errors: [fieldError("body.code", `no ${PATH[change]} challenge is pending`)],
      });
    const pending = await this.services.data.one(
      q
        .selectFrom("ScaChallenge")
        .selectAll()
        .where("platformId", "=", ctx.platformId)
        .where("customerId", "=", customer.id)
        .where("purpose", "=", change)
        .where("subjectId", "=", account.id),
    );
    if (!pending) throw noChallenge(`No ${PATH[change]} challenge is pending for ${account.id}`);
    if (input.challengeId != null && input.challengeId !== pending.id) {
      throw invalidInput("challengeId is not the pending challenge's", {
        errors: [fieldError("body.challengeId", "not the pending challenge")],
      });
    }
    if (input.code == null) {
      throw invalidInput(`The challenge is answered with its ${pending.factor} code`, {
        errors: [fieldError("body.code", "required for an SMS_OTP challenge")],
      });
    }
    await answerCode(this.services.data, {
      kind: "SCA",
      issued: pending,
      code: input.code,
      now,
      store: scaChallengeStore(pending),
      unusable: (why) =>
        noChallenge(why === "EXPIRED" ? "The challenge expired" : "Too many wrong codes"),
    });
    const trusted = change === "TRUST";
    const done = await this.services.data.transaction(function* () {
      const consumed = yield* run(
        q
          .deleteFrom("ScaChallenge")
          .where("id", "=", pending.id)
          .where("platformId", "=", pending.platformId),
      );
      if (consumed === 0) return false;
      const marked = yield* one(
        q
          .updateTable("ExternalAccount")
          .set({ scaTrustedAt: trusted ? now : null, updatedAt: now })
          .where("id", "=", account.id)
          .where("platformId", "=", account.platformId)
          .where("deletedAt", "is", null)
          .returning("id"),
      );
      // The account was deleted since it was read: keep the challenge.
      if (!marked) throw noChallenge(`External account ${account.id} was deleted`);
      return true;
    });
    if (!done) throw noChallenge("The challenge was already answered");
    return { trusted };
  }
}
