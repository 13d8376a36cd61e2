import type {
  SignedRequestGuard,
  SignedRequestDecision,
} from "../areas/quotes/signed-request-guard.js";
import type { Database } from "../db/database.js";
import type { SignedRequests } from "./signed-requests.js";

/**
 * Quote execution's signed retry, on the same mechanism as every other
 * signed flow: the first leg stores a challenge, the retry must be stamped by
 * an active session of the source wallet. The approval is consumed before
 * the quote executes (the guard interface has no transaction to share), so a
 * Request-Id can never authorise two executions; if execution then fails, the
 * client starts again with a new challenge.
 */
export function walletSignatureGuard(signing: SignedRequests, db: Database): SignedRequestGuard {
  return {
    async check({ ctx, accountId, action, parameters, headers }): Promise<SignedRequestDecision> {
      const outcome = await signing.handle(
        ctx,
        {
          ...(headers.signature ? { signature: headers.signature } : {}),
          ...(headers.requestId ? { requestId: headers.requestId } : {}),
        },
        { activity: action, accountId, parameters },
      );
      if (outcome.kind === "CHALLENGE") {
        const { payloadToSign, requestId, expiresAt } = outcome.body;
        return { kind: "CHALLENGE", challenge: { payloadToSign, requestId, expiresAt } };
      }
      await db.transaction(() => signing.consume(ctx, outcome.approval));
      return { kind: "AUTHORIZED" };
    },
  };
}
