import type { components } from "./generated/api.js";

/** A declined card simulation's answer: the decline, with no card transaction. */
export type CardDecline = components["schemas"]["SandboxCardDecline"];

/**
 * What a simulation that authorizes something new on a card answers (a
 * purchase, a balance inquiry, a credit): the card transaction, or the decline.
 */
export type CardAuthorizationResult = components["schemas"]["SandboxCardAuthorizationResult"];

/**
 * Whether a card simulation was declined. Production keeps no card
 * transaction for a declined authorization, and the sandbox answers the
 * decline instead: only a decline carries `declineReason`.
 */
export function isCardDecline(result: CardAuthorizationResult): result is CardDecline {
  return "declineReason" in result;
}
