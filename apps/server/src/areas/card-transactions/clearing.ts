import type { Row as RowOf } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { giveBack, targetOf, tryPull } from "./funding-moves.js";
import type { ChangeOp, ChildEvent, Progress } from "./transaction-change.js";
import { requireStatus } from "./transitions.js";

// The clearing of an authorization: the merchant settles what it authorized.

type Row = RowOf<"CardTransaction">;

/**
 * Whether a purchase still has an authorization to clear: AUTHORIZED, or an
 * authorization that an advice re-opened (it holds money again) after a
 * partial clearing or a failed pull. Otherwise 409.
 */
function requireOpen(row: Row, action: string) {
  if (row.status === "AUTHORIZED") return;
  if (row.heldAmount > 0n && (row.status === "PARTIALLY_SETTLED" || row.status === "EXCEPTION")) {
    return;
  }
  requireStatus(row, ["AUTHORIZED"], action);
}

/**
 * The clearing of a credit authorization posts the credit: the cleared
 * amount goes to the funding source, SETTLED (PARTIALLY_SETTLED below the
 * authorized amount); `0` expires it with nothing posted, which closes it:
 * SETTLED, as an expired purchase is (see clearing).
 */
function* clearCredit(
  row: Row,
  next: Progress,
  cleared: bigint,
  at: Date,
): SqlProgram<ChildEvent[]> {
  requireStatus(row, ["AUTHORIZED"], "cleared");
  if (cleared === 0n) {
    next.status = "SETTLED";
    return [];
  }
  yield* giveBack(targetOf(row, at), cleared, "CARD_CREDIT");
  next.settledAmount += cleared;
  next.settlementCount += 1;
  next.settlementTotal += cleared;
  next.status = cleared < next.authorizedAmount ? "PARTIALLY_SETTLED" : "SETTLED";
  return [{ kind: "SETTLEMENT", amount: cleared, status: "CONFIRMED" }];
}

/**
 * A clearing of `cleared`: a purchase settles it, pulling what exceeds the
 * hold or releasing what the hold has left; `0` expires the authorization.
 */
export function clearing(cleared: bigint, at: Date): ChangeOp {
  return function* (row, next) {
    if (row.direction === "CREDIT") return yield* clearCredit(row, next, cleared, at);
    requireOpen(row, "cleared");
    const target = targetOf(row, at);
    const children: ChildEvent[] = [];
    // What is held is what the open authorization still covers.
    const held = next.heldAmount;
    // Settled before: an authorization an advice re-opened after a partial clearing.
    const settledBefore = next.settledAmount > 0n;
    if (cleared === 0n) {
      yield* giveBack(target, held, "CARD_RELEASE");
      if (held > 0n) children.push({ kind: "RELEASE", amount: held, status: "CONFIRMED" });
      next.heldAmount = 0n;
      // Expired (production's AUTHORIZATION_EXPIRY): closed with nothing
      // settled, which production's statuses call SETTLED. An advice's
      // re-opened hold that expires leaves the partial settlement as it was.
      next.status = settledBefore ? "PARTIALLY_SETTLED" : "SETTLED";
    } else {
      if (cleared > held) {
        const difference = cleared - held;
        const pulled = yield* tryPull(target, difference, "CARD_PULL");
        children.push({
          kind: "PULL",
          amount: difference,
          status: pulled ? "CONFIRMED" : "FAILED",
        });
        next.pullCount += 1;
        if (pulled) next.pullTotal += difference;
        next.status = pulled ? "SETTLED" : "EXCEPTION";
      } else if (cleared < held) {
        yield* giveBack(target, held - cleared, "CARD_RELEASE");
        children.push({ kind: "RELEASE", amount: held - cleared, status: "CONFIRMED" });
        next.status = "PARTIALLY_SETTLED";
      } else {
        next.status = "SETTLED";
      }
      children.push({ kind: "SETTLEMENT", amount: cleared, status: "CONFIRMED" });
      next.heldAmount = 0n;
      next.settledAmount += cleared;
      next.settlementCount += 1;
      next.settlementTotal += cleared;
    }
    // A failed pull stays the transaction's news until it is dealt with.
    if (row.status === "EXCEPTION") next.status = "EXCEPTION";
    return children;
  };
}
