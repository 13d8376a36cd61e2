import type { SqlProgram } from "../../db/sql.js";
import { ApiError, Reason } from "../../errors.js";
import { debit, InsufficientFundsError, type Posting } from "./ledger.js";

/**
 * The API's answer to a debit the balance cannot cover: production's 400
 * INVALID_INPUT, with the cause in `reason`.
 */
export function insufficientBalance(posting: Posting): ApiError {
  return new ApiError(
    400,
    "INVALID_INPUT",
    `Internal account ${posting.accountId} does not hold ${posting.amount} to cover this`,
    {
      reason: Reason.insufficientBalance,
      details: { internalAccountId: posting.accountId, amount: Number(posting.amount) },
    },
  );
}

/**
 * A guarded debit whose refusal is the API's answer. Thrown inside the
 * caller's transaction, the refusal also rolls back everything written before it.
 */
export function* debitOrRefuse(posting: Posting): SqlProgram<bigint> {
  try {
    return yield* debit(posting);
  } catch (err) {
    if (err instanceof InsufficientFundsError) throw insufficientBalance(posting);
    throw err;
  }
}
