import { cardAuthorizationOutcome, type CardPullResolution } from "@payments-sandbox/sandbox-rules";
import { ApiError, fieldError, invalidInput } from "../../errors.js";
import type { CardForUse } from "./card-for-use.js";
import type { SimulateAuthorization } from "./requests.js";
import { cardDecline, type CardDecline } from "./view.js";

// Whether a new authorization of any kind is approved, before any money moves.

/**
 * How the card and the sandbox table decide a new authorization of any kind:
 * a decline, or how its pull resolves. The card's state comes first, then
 * (for money taken from the card only) its per-transaction limit, then the
 * last 3 characters of `merchant.descriptor`.
 */
export function decide(
  card: CardForUse,
  descriptor: string,
  amount: bigint,
  spends: boolean,
): { decline: CardDecline } | { pull: CardPullResolution } {
  const decline = (reason: CardDecline["declineReason"], words: string) => ({
    decline: cardDecline(card.id, reason, words),
  });
  if (card.state === "FROZEN") return decline("CARD_PAUSED", "The card is FROZEN");
  if (card.state !== "ACTIVE") {
    return decline("CARD_NOT_ACTIVE", `The card is ${card.state}, not ACTIVE`);
  }
  const max = card.maxSpendPerTransaction;
  if (spends && max !== null && amount > max) {
    return decline(
      "MAX_SPEND_EXCEEDED",
      `${amount} is above the card's maxSpendPerTransaction of ${max}`,
    );
  }
  const { matched, outcome } = cardAuthorizationOutcome(descriptor);
  if (outcome.kind === "DECLINE") {
    return decline(
      outcome.declineReason,
      `The merchant descriptor ends in ${matched}: the sandbox declines it as ${outcome.declineReason}`,
    );
  }
  return { pull: outcome.pull };
}

/** No funding source of the card can cover the amount (or take a credit). */
export function uncovered(cardId: string, amount: bigint, credit = false): CardDecline {
  return cardDecline(
    cardId,
    "INSUFFICIENT_FUNDS",
    credit
      ? "The card has no funding source to credit"
      : `No funding source of the card covers ${amount} (an embedded wallet counts only with an ACTIVE delegated key for the card)`,
  );
}

/** The currency of an authorization-shaped request: the card's, or 400. */
export function requireCardCurrency(card: CardForUse, currency: SimulateAuthorization["currency"]) {
  if (currency.code === undefined) {
    throw invalidInput("currency.code is required: the currency of the authorization", {
      errors: [fieldError("body.currency.code", "required")],
    });
  }
  if (currency.code !== card.currency) {
    throw new ApiError(
      400,
      "INVALID_CURRENCY",
      `The card is in ${card.currency}; the authorization is in ${currency.code}`,
    );
  }
  return currency.code;
}
