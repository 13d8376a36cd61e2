import { q, one, rowOf, statement } from "../../db/query.js";
import type { SqlInsert, SqlProgram, SqlStep } from "../../db/sql.js";
import { newId } from "../../ids.js";
import { amountOutOfRange, MAX_AMOUNT } from "./amount-range.js";

// A balance changes only here, and only together with the ledger entry that
// explains it, in the same transaction. Both directions are one conditional
// UPDATE (no read-then-write): a debit never takes a balance below zero, a
// credit never above MAX_AMOUNT (the API's range), and neither touches an
// account of another platform.

export interface Posting {
  platformId: string;
  accountId: string;
  /** Positive minor units. */
  amount: bigint;
  kind: string;
  reference?: string;
  at: Date;
}

export class InsufficientFundsError extends Error {
  constructor(readonly accountId: string) {
    super(`account ${accountId} cannot cover the amount`);
  }
}

/** The entry that explains one balance change. */
function ledgerEntryRow(p: Posting, signed: bigint, balanceAfter: bigint): SqlInsert {
  return rowOf("LedgerEntry", {
    id: newId("LedgerEntry"),
    platformId: p.platformId,
    accountId: p.accountId,
    amount: signed,
    balanceAfter,
    kind: p.kind,
    reference: p.reference ?? null,
    createdAt: p.at,
  });
}

/**
 * A thrown refusal of a credit that would take the balance above MAX_AMOUNT:
 * 400 AMOUNT_OUT_OF_RANGE, and the caller's transaction writes nothing.
 */
export function balanceOutOfRange(p: Posting) {
  return amountOutOfRange(
    `Internal account ${p.accountId} cannot take ${p.amount} more: its balance would exceed ${MAX_AMOUNT}`,
    { internalAccountId: p.accountId, amount: Number(p.amount) },
  );
}

const debitGuard = (p: Posting) =>
  q
    .updateTable("InternalAccount")
    .set((eb) => ({ balance: eb("balance", "-", p.amount), updatedAt: p.at }))
    .where("id", "=", p.accountId)
    .where("platformId", "=", p.platformId)
    .where("balance", ">=", p.amount)
    .returning("balance");

const creditGuard = (p: Posting) =>
  q
    .updateTable("InternalAccount")
    .set((eb) => ({ balance: eb("balance", "+", p.amount), updatedAt: p.at }))
    .where("id", "=", p.accountId)
    .where("platformId", "=", p.platformId)
    .where("balance", "<=", MAX_AMOUNT - p.amount)
    .returning("balance");

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
    ...statement(debitGuard(p)),
    inserts: [...rows, { ...entry, fromGuard: { balanceAfter: "balance" } }],
  };
}

/** Debits only if the balance covers it; throws InsufficientFundsError, writing nothing, if not. */
export function* debit(p: Posting): SqlProgram<bigint> {
  const after = balanceOf(yield guardedDebit(p, []));
  if (after === null) throw new InsufficientFundsError(p.accountId);
  return after;
}

/** Credits only if the balance stays in range; the account must be the platform's. */
export function* credit(p: Posting): SqlProgram<bigint> {
  if (p.amount <= 0n) throw new Error("credit amount must be positive");
  const updated = yield* one(creditGuard(p));
  if (updated === undefined) {
    const exists = yield* one(
      q
        .selectFrom("InternalAccount")
        .select("id")
        .where("id", "=", p.accountId)
        .where("platformId", "=", p.platformId),
    );
    if (exists === undefined) throw new Error(`account ${p.accountId} not found`);
    throw balanceOutOfRange(p);
  }
  yield { kind: "insert", ...ledgerEntryRow(p, p.amount, updated.balance) };
  return updated.balance;
}
