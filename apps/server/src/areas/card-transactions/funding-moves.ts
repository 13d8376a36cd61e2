import type { Row } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { credit, debit, InsufficientFundsError } from "../ledger/ledger.js";

// Every movement of money for a card transaction goes through the ledger,
// against the transaction's funding source, referencing the transaction.

export type CardLedgerKind =
  /** The authorization's pull: the hold. */
  | "CARD_AUTHORIZATION"
  /** A financial (single-message) authorization's pull: settled at once. */
  | "CARD_FINANCIAL"
  /** Incremental authorization, post-hoc pull at clearing, or an advice that re-sizes up. */
  | "CARD_PULL"
  /** A return reversal takes the refunded amount back. */
  | "CARD_RETURN_REVERSAL"
  /** A credit authorization's amount, posted when it settles. */
  | "CARD_CREDIT"
  /** A failed pull gives back what it took. */
  | "CARD_PULL_FAILED"
  /** Reversal, expiry, or the unused part of a partial clearing. */
  | "CARD_RELEASE"
  | "CARD_REFUND";

export interface MoveTarget {
  platformId: string;
  accountId: string;
  cardTransactionId: string;
  at: Date;
}

/** The transaction's moves, at `at`: against its funding source. */
export function targetOf(row: Row<"CardTransaction">, at: Date): MoveTarget {
  if (row.fundingSourceId === null) throw new Error(`${row.id} has no funding source`);
  return {
    platformId: row.platformId,
    accountId: row.fundingSourceId,
    cardTransactionId: row.id,
    at,
  };
}

/** A guarded debit: false, and nothing written, when the account cannot cover it. */
export function* tryPull(
  target: MoveTarget,
  amount: bigint,
  kind: "CARD_PULL" | "CARD_RETURN_REVERSAL",
): SqlProgram<boolean> {
  try {
    yield* debit({
      platformId: target.platformId,
      accountId: target.accountId,
      amount,
      kind,
      reference: target.cardTransactionId,
      at: target.at,
    });
    return true;
  } catch (err) {
    if (err instanceof InsufficientFundsError) return false;
    throw err;
  }
}

/** Money back (or, for a credit, in) to the funding source; a zero amount writes nothing. */
export function* giveBack(
  target: MoveTarget,
  amount: bigint,
  kind: "CARD_PULL_FAILED" | "CARD_RELEASE" | "CARD_REFUND" | "CARD_CREDIT",
): SqlProgram<void> {
  if (amount <= 0n) return;
  yield* credit({
    platformId: target.platformId,
    accountId: target.accountId,
    amount,
    kind,
    reference: target.cardTransactionId,
    at: target.at,
  });
}
