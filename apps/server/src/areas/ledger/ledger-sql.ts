import type { SqlProgram } from "../../db/sql.js";
import { ledgerEntryRow, type Posting } from "./ledger.js";

// The ledger's credit and debit as steps of a direct-SQL transaction (see
// db/sql.ts), for hot paths that bypass Prisma. Same rules as ledger.ts: the
// debit is one conditional UPDATE (no read-then-write), and every balance
// change writes the entry that explains it, in the same transaction.

const DEBIT = `UPDATE "InternalAccount" SET "balance" = "balance" - ?, "updatedAt" = ? WHERE "id" = ? AND "balance" >= ? RETURNING "balance"`;
const CREDIT = `UPDATE "InternalAccount" SET "balance" = "balance" + ?, "updatedAt" = ? WHERE "id" = ? RETURNING "balance"`;

function balanceOf(row: unknown): bigint | null {
  if (row === undefined || row === null) return null;
  return BigInt((row as { balance: bigint | string | number }).balance);
}

/** Debits only if the balance covers it; the balance after, or null (nothing written). */
export function* debitSteps(p: Posting): SqlProgram<bigint | null> {
  if (p.amount <= 0n) throw new Error("debit amount must be positive");
  const after = balanceOf(
    yield { kind: "one", sql: DEBIT, params: [p.amount, p.at, p.accountId, p.amount] },
  );
  if (after === null) return null;
  yield { kind: "insert", table: "LedgerEntry", row: ledgerEntryRow(p, -p.amount, after) };
  return after;
}

export function* creditSteps(p: Posting): SqlProgram<bigint> {
  if (p.amount <= 0n) throw new Error("credit amount must be positive");
  const after = balanceOf(
    yield { kind: "one", sql: CREDIT, params: [p.amount, p.at, p.accountId] },
  );
  if (after === null) throw new Error(`account ${p.accountId} not found`);
  yield { kind: "insert", table: "LedgerEntry", row: ledgerEntryRow(p, p.amount, after) };
  return after;
}
