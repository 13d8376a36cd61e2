import type { Schemas } from "@payments-sandbox/client";
import { issueCode } from "@payments-sandbox/sandbox-rules";
import type { Database } from "../../db/database.js";
import { one, q, run } from "../../db/query.js";
import { invalidInput } from "../../errors.js";
import type { RequestContext } from "../../http/context.js";
import { newId } from "../../ids.js";
import type { CodeStore } from "../sca/code-challenge.js";
import { paymentNeedsSca } from "../sca/requirement.js";
import type { QuoteRow, ScaChange } from "./records.js";

// A quote's strong customer authentication: the challenge it is held behind
// lives on the quote's own row (scaChallengeId, scaExpiresAt, scaAttempts).

/** An answered (or spent) challenge no longer holds the quote. */
export const ANSWERED: ScaChange = { scaChallengeId: null, scaExpiresAt: null };

/** A new SCA challenge; the sandbox answers SMS codes only (TOTP and PASSKEY need enrolment). */
export function newChallenge(
  at: Date,
  factor: Schemas["ScaFactor"] | undefined,
): ScaChange & {
  scaChallengeId: string;
  scaFactor: string;
  scaExpiresAt: Date;
} {
  if (factor !== undefined && factor !== "SMS_OTP") {
    throw invalidInput(
      `scaFactor ${factor} needs an enrolled factor; the sandbox challenges with SMS_OTP`,
      { field: "scaFactor" },
    );
  }
  return {
    scaChallengeId: newId("ScaChallenge"),
    scaFactor: "SMS_OTP",
    scaExpiresAt: issueCode("SCA", at).expiresAt,
  };
}

/**
 * Whether paying the quote needs a challenge: its customer uses SCA and
 * its destination is not one of the customer's trusted beneficiaries.
 */
export function quoteNeedsSca(
  data: Database,
  ctx: RequestContext,
  quote: QuoteRow,
): Promise<boolean> {
  return paymentNeedsSca(data, ctx, quote.customerId, quote.destinationExternalAccountId);
}

/**
 * A quote keeps its challenge on its own row: a wrong answer counts against
 * the challenge that was read, and the last one spends it (the quote then
 * has no pending challenge).
 */
export function quoteChallengeStore(quote: QuoteRow): CodeStore {
  const challengeId = quote.scaChallengeId;
  return {
    *countWrong(spent) {
      if (challengeId === null) return undefined;
      const counted = yield* one(
        q
          .updateTable("Quote")
          .set((eb) => ({ scaAttempts: eb("scaAttempts", "+", 1) }))
          .where("id", "=", quote.id)
          .where("scaChallengeId", "=", challengeId)
          .returning("scaAttempts"),
      );
      if (counted && spent(counted.scaAttempts)) {
        yield* run(
          q
            .updateTable("Quote")
            .set({ scaChallengeId: null, scaExpiresAt: null })
            .where("id", "=", quote.id)
            .where("scaChallengeId", "=", challengeId),
        );
      }
      return counted?.scaAttempts;
    },
  };
}
