import { one, q, run } from "../../db/query.js";
import { ApiError } from "../../errors.js";
import { giveBack, targetOf, tryPull } from "./funding-moves.js";
import type { ChangeOp, Progress } from "./transaction-change.js";
import { requireDebit, requireStatus } from "./transitions.js";
import type { CardTransactionStatus } from "./view.js";

// A settled purchase's returns (refunds), and the network taking one back.

/**
 * What a settled purchase goes back to when its refunds no longer cover it:
 * PARTIALLY_SETTLED when less was settled than authorized, else SETTLED.
 */
const settledStatus = (next: Progress): CardTransactionStatus =>
  next.settledAmount < next.authorizedAmount ? "PARTIALLY_SETTLED" : "SETTLED";

/**
 * A return of `amount` to the funding source, at most what is settled and not
 * yet refunded (else 400 INVALID_AMOUNT); REFUNDED once all of it is.
 */
export function refund(amount: bigint, at: Date): ChangeOp {
  return function* (row, next) {
    requireStatus(row, ["SETTLED", "PARTIALLY_SETTLED"], "refunded");
    requireDebit(row, "refunded");
    const refundable = next.settledAmount - next.refundedAmount;
    if (amount > refundable) {
      throw new ApiError(
        400,
        "INVALID_AMOUNT",
        `At most ${refundable} is left to refund on this transaction`,
        { details: { refundable: Number(refundable) } },
      );
    }
    yield* giveBack(targetOf(row, at), amount, "CARD_REFUND");
    next.refundedAmount += amount;
    next.refundCount += 1;
    next.refundTotal += amount;
    if (next.refundedAmount === next.settledAmount) next.status = "REFUNDED";
    return [{ kind: "REFUND", amount, status: "CONFIRMED" }];
  };
}

/**
 * A return reversal: the network takes back the latest return of a
 * REFUNDED purchase. Its amount is pulled from the funding source again
 * (a pull in `pullSummary`), the return no longer counts in
 * `refundedAmount` or `refundSummary`, and the transaction is settled
 * again (SETTLED, or PARTIALLY_SETTLED when less was settled than
 * authorized). If the funding source cannot cover it the pull is recorded
 * FAILED and the transaction becomes EXCEPTION.
 */
export function returnReversal(at: Date): ChangeOp {
  return function* (row, next) {
    requireStatus(row, ["REFUNDED"], "return-reversed");
    const refund = yield* one(
      q
        .selectFrom("CardTransactionEvent")
        .select(["id", "amount"])
        .where("cardTransactionId", "=", row.id)
        .where("kind", "=", "REFUND")
        .where("status", "=", "CONFIRMED")
        .orderBy("createdAt", "desc")
        .orderBy("id", "desc")
        .limit(1),
    );
    if (!refund) throw new Error(`${row.id} is REFUNDED without a standing refund`);
    yield* run(
      q
        .updateTable("CardTransactionEvent")
        .set({ status: "REVERSED", updatedAt: at })
        .where("id", "=", refund.id),
    );
    const { amount } = refund;
    const pulled = yield* tryPull(targetOf(row, at), amount, "CARD_RETURN_REVERSAL");
    next.refundedAmount -= amount;
    next.refundCount -= 1;
    next.refundTotal -= amount;
    next.pullCount += 1;
    if (pulled) next.pullTotal += amount;
    next.status = pulled ? settledStatus(next) : "EXCEPTION";
    return [{ kind: "PULL", amount, status: pulled ? "CONFIRMED" : "FAILED" }];
  };
}
