import type { Row as RowOf } from "../../db/query.js";
import { ApiError } from "../../errors.js";
import type { CardTransactionStatus } from "./view.js";

// Which transactions a change may act on: any other is 409 INVALID_STATE_TRANSITION.

type Row = RowOf<"CardTransaction">;

export function requireStatus(row: Row, allowed: readonly CardTransactionStatus[], action: string) {
  if (!allowed.includes(row.status as CardTransactionStatus)) {
    throw new ApiError(
      409,
      "INVALID_STATE_TRANSITION",
      `A ${row.status} card transaction cannot be ${action}; it must be ${allowed.join(" or ")}`,
      { details: { status: row.status } },
    );
  }
}

/** A change that moves money the way only a purchase (a DEBIT transaction) can. */
export function requireDebit(row: Row, action: string) {
  if (row.direction !== "DEBIT") {
    throw new ApiError(
      409,
      "INVALID_STATE_TRANSITION",
      `A credit card transaction cannot be ${action}; only a purchase can`,
      { details: { status: row.status, direction: row.direction } },
    );
  }
}
