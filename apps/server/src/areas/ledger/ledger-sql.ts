import type { SqlInsert, SqlProgram, SqlStep } from "../../db/sql.js";
import { MAX_AMOUNT } from "./amount-range.js";
import { balanceOutOfRange, ledgerEntryRow, type Posting } from "./ledger.js";

// The ledger's credit and debit as steps of a direct-SQL transaction (see
// db/sql.ts), for hot paths that bypass Prisma. Same rules as ledger.ts: the
// debit and the credit are each one conditional UPDATE (no read-then-write:
// the balance stays between 0 and MAX_AMOUNT), and every balance change
// writes the entry that explains it, in the same step.

const DEBIT = `UPDATE "InternalAccount" SET "balance" = "balance" - ?, "updatedAt" = ? WHERE "id" = ? AND "platformId" = ? AND "balance" >= ? RETURNING "balance"`;
const CREDIT = `UPDATE "InternalAccount" SET "balance" = "balance" + ?, "updatedAt" = ? WHERE "id" = ? AND "balance" <= ? RETURNING "balance"`;

/** The balance an UPDATE ... RETURNING "balance" returned, or null when it matched no row. */
export function balanceOf(row: unknown): bigint | null {
  if (row === undefined || row === null) return null;
  return BigInt((row as { balance: bigint | string | number }).balance);
}

/**
 * A debit only if the balance covers it, with its ledger entry and whatever
 * else must be written with it (`rows`), as one guarded step: nothing is
 * written unless the account is the platform's and its balance covers the
 * amount. The step yields the balance after, or undefined.
 */
export function guardedDebit(p: Posting, rows: readonly SqlInsert[]): SqlStep {
  if (p.amount <= 0n) throw new Error("debit amount must be positive");
  // The entry's balanceAfter is the balance the debit returns.
  const entry = ledgerEntryRow(p, -p.amount, 0n);
  return {
    kind: "guarded",
    sql: DEBIT,
    params: [p.amount, p.at, p.accountId, p.platformId, p.amount],
    inserts: [
      ...rows,
      { table: "LedgerEntry", row: entry, fromGuard: { balanceAfter: "balance" } },
    ],
  };
}

export function* creditSteps(p: Posting): SqlProgram<bigint> {
  if (p.amount <= 0n) throw new Error("credit amount must be positive");
  const after = balanceOf(
    yield {
      kind: "one",
      sql: CREDIT,
      params: [p.amount, p.at, p.accountId, MAX_AMOUNT - p.amount],
    },
  );
  // The account exists (these credits give back what the same program took).
  if (after === null) throw balanceOutOfRange(p);
  yield { kind: "insert", table: "LedgerEntry", row: ledgerEntryRow(p, p.amount, after) };
  return after;
}
