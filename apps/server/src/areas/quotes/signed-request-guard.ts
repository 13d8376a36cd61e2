import type { Schemas } from "@payments-sandbox/client";
import type { RequestContext } from "../../http/context.js";
import { Activity } from "../../signing/activities.js";

/** The wallet headers of a request, as received. */
export interface SignedRequestHeaders {
  /** `Service-Wallet-Signature`. */
  signature?: string | undefined;
  /** `Request-Id`. */
  requestId?: string | undefined;
}

/** A request that an embedded wallet's session must sign. */
export interface SignedRequest {
  ctx: RequestContext;
  /** The EMBEDDED_WALLET internal account whose active session must stamp the retry. */
  accountId: string;
  /** The action named in `payloadToSign`, e.g. `ACTIVITY_TYPE_EXECUTE_QUOTE`. */
  action: string;
  /** Every value the signed retry must repeat, bound into `payloadToSign`. */
  parameters: Record<string, unknown>;
  headers: SignedRequestHeaders;
}

export type SignedRequestDecision =
  /** The retry carries a valid stamp over the pending payload: go ahead. */
  | { kind: "AUTHORIZED" }
  /** First leg (no wallet headers): answer 202 with this challenge. */
  | { kind: "CHALLENGE"; challenge: Schemas["SignedRequestChallenge"] };

/**
 * The two-step signed retry of embedded-wallet actions. QuoteService asks it
 * before executing a quote whose source is an EMBEDDED_WALLET account; when
 * no guard is configured, such quotes execute like any other. A rejected
 * retry (bad stamp, unknown Request-Id, body mismatch) is thrown by the
 * guard as a 401 ApiError.
 */
export interface SignedRequestGuard {
  check(request: SignedRequest): Promise<SignedRequestDecision>;
}

/** The payloadToSign action of quote execution. */
export const EXECUTE_QUOTE_ACTION = Activity.EXECUTE_QUOTE;
