import { ApiError } from "../../errors.js";
import { giveBack, targetOf, tryPull } from "./funding-moves.js";
import type { SimulateReversal } from "./requests.js";
import type { ChangeOp } from "./transaction-change.js";
import { requireDebit, requireStatus } from "./transitions.js";

// The network re-sizes an open authorization: an incremental authorization,
// a reversal (whole or partial), or an authorization advice.

/** Only an ACTIVE card takes incremental authorizations: 409 otherwise. */
export function requireIncrementable(card: { state: string }): void {
  if (card.state !== "ACTIVE") {
    throw new ApiError(
      409,
      "INVALID_STATE_TRANSITION",
      `The card is ${card.state}; only an ACTIVE card takes incremental authorizations`,
    );
  }
}

/**
 * An incremental authorization: `amount` more authorized and held, pulled at
 * once; one the funding source cannot cover is 400 and changes nothing.
 */
export function increment(amount: bigint, at: Date): ChangeOp {
  return function* (row, next) {
    requireStatus(row, ["AUTHORIZED"], "incremented");
    requireDebit(row, "incremented");
    if (!(yield* tryPull(targetOf(row, at), amount, "CARD_PULL"))) {
      throw new ApiError(
        400,
        "AMOUNT_OUT_OF_RANGE",
        "The funding source cannot cover the increment; the authorization is unchanged",
        { details: { reason: "INSUFFICIENT_FUNDS" } },
      );
    }
    next.authorizedAmount += amount;
    next.heldAmount += amount;
    next.pullCount += 1;
    next.pullTotal += amount;
    return [{ kind: "PULL", amount, status: "CONFIRMED" }];
  };
}

/**
 * A reversal of the request's amount (all that is authorized when it names
 * none): released to the funding source; at most what is authorized, else 400.
 */
export function reversal(input: SimulateReversal, at: Date): ChangeOp {
  return function* (row, next) {
    requireStatus(row, ["AUTHORIZED"], "reversed");
    const amount = input.amount === undefined ? next.authorizedAmount : BigInt(input.amount);
    if (amount > next.authorizedAmount) {
      throw new ApiError(
        400,
        "INVALID_AMOUNT",
        `At most ${next.authorizedAmount} is authorized on this transaction`,
        { details: { authorizedAmount: Number(next.authorizedAmount) } },
      );
    }
    next.authorizedAmount -= amount;
    // Wholly reversed: closed with nothing settled, SETTLED in production's
    // statuses (it has none of its own for a reversal), as an expiry is.
    if (next.authorizedAmount === 0n) next.status = "SETTLED";
    // A credit authorization holds nothing: only its amount changes.
    if (row.direction === "CREDIT") return [];
    yield* giveBack(targetOf(row, at), amount, "CARD_RELEASE");
    next.heldAmount -= amount;
    return [{ kind: "RELEASE", amount, status: "CONFIRMED" }];
  };
}

/**
 * An authorization advice: the network re-sizes an open authorization
 * (AUTHORIZED, or PARTIALLY_SETTLED) to a new total. The hold follows: it
 * becomes the new total less what is already settled, pulling the
 * difference (as an increment does) or releasing it (as a reversal does).
 * The network has already approved the new total, so a pull the funding
 * source cannot cover is recorded FAILED and the transaction becomes
 * EXCEPTION, its authorization re-sized all the same. Below what is
 * settled is 400 INVALID_AMOUNT.
 */
export function authorizationAdvice(total: bigint, at: Date): ChangeOp {
  return function* (row, next) {
    requireStatus(row, ["AUTHORIZED", "PARTIALLY_SETTLED"], "re-sized by an advice");
    if (total < next.settledAmount) {
      throw new ApiError(
        400,
        "INVALID_AMOUNT",
        `${next.settledAmount} of this transaction is settled; it cannot be authorized for less`,
        { details: { settledAmount: Number(next.settledAmount) } },
      );
    }
    next.authorizedAmount = total;
    // A credit authorization holds nothing: only its amount changes.
    if (row.direction === "CREDIT") return [];
    const target = targetOf(row, at);
    const hold = total - next.settledAmount;
    if (hold > next.heldAmount) {
      const more = hold - next.heldAmount;
      const pulled = yield* tryPull(target, more, "CARD_PULL");
      next.pullCount += 1;
      if (pulled) {
        next.pullTotal += more;
        next.heldAmount = hold;
      } else {
        next.status = "EXCEPTION";
      }
      return [{ kind: "PULL", amount: more, status: pulled ? "CONFIRMED" : "FAILED" }];
    }
    if (hold < next.heldAmount) {
      const less = next.heldAmount - hold;
      yield* giveBack(target, less, "CARD_RELEASE");
      next.heldAmount = hold;
      return [{ kind: "RELEASE", amount: less, status: "CONFIRMED" }];
    }
    return [];
  };
}
