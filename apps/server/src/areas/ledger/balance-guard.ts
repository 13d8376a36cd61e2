import type { Tx } from "../../db/client.js";
import { ApiError } from "../../errors.js";
import { debit, InsufficientFundsError, type Posting } from "./ledger.js";

/**
 * A guarded debit whose refusal is the API's answer: 400 INSUFFICIENT_BALANCE.
 * Thrown inside the caller's database transaction, it also rolls back
 * everything written before it.
 */
export async function debitOrRefuse(tx: Tx, posting: Posting): Promise<void> {
  try {
    await debit(tx, posting);
  } catch (err) {
    if (!(err instanceof InsufficientFundsError)) throw err;
    throw new ApiError(
      400,
      "INSUFFICIENT_BALANCE",
      `Internal account ${posting.accountId} does not hold ${posting.amount} to cover this`,
      { details: { internalAccountId: posting.accountId, amount: Number(posting.amount) } },
    );
  }
}
