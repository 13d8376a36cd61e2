import { q, one, rowOf, statement, type Row } from "../../db/query.js";
import type { SqlInsert, SqlProgram, SqlStep } from "../../db/sql.js";
import { emitEvent, outboxInsert, type EventInput } from "../../events/outbox.js";
import { newId } from "../../ids.js";
import { toInternalAccount } from "../internal-accounts/view.js";
import { amountOutOfRange, MAX_AMOUNT } from "./amount-range.js";

// A balance changes only here, and only together with the ledger entry that
// explains it and its INTERNAL_ACCOUNT.BALANCE_UPDATED event, in the same
// transaction. Both directions are one conditional UPDATE (no
// read-then-write): a debit never takes a balance below zero, a credit never
// above MAX_AMOUNT (the API's range), and neither touches an account of
// another platform.

type AccountRow = Row<"InternalAccount">;

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

/** The event of a balance change: the account as the API shows it after the change. */
function balanceUpdated(account: AccountRow, at: Date): EventInput {
  return {
    platformId: account.platformId,
    type: "INTERNAL_ACCOUNT.BALANCE_UPDATED",
    objectId: account.id,
    data: toInternalAccount(account),
    at,
  };
}

/**
 * The balance event of a guarded debit, written before the debit returns the
 * balance: its text holds a mark where the balance goes, and the debit's own
 * statement fills it in. The mark is a control character, which JSON text
 * never holds unescaped; the placeholder balance is negative, which no
 * amount of an account's view ever is.
 */
function balanceEventOfDebit(p: Posting, account: AccountRow): SqlInsert {
  const event = outboxInsert(balanceUpdated({ ...account, balance: -1n, updatedAt: p.at }, p.at));
  const payload = event.row.payload.replaceAll('"amount":-1', `"amount":${BALANCE_MARK}`);
  return {
    ...event,
    row: { ...event.row, payload },
    fillFromGuard: { column: "payload", token: BALANCE_MARK, from: "balance" },
  };
}
const BALANCE_MARK = "\u0001";

const debitGuard = (p: Posting) =>
  q
    .updateTable("InternalAccount")
    .set((eb) => ({ balance: eb("balance", "-", p.amount), updatedAt: p.at }))
    .where("id", "=", p.accountId)
    .where("platformId", "=", p.platformId)
    .where("balance", ">=", p.amount)
    .returningAll();

const creditGuard = (p: Posting) =>
  q
    .updateTable("InternalAccount")
    .set((eb) => ({ balance: eb("balance", "+", p.amount), updatedAt: p.at }))
    .where("id", "=", p.accountId)
    .where("platformId", "=", p.platformId)
    .where("balance", "<=", MAX_AMOUNT - p.amount)
    .returningAll();

/** The balance an UPDATE ... RETURNING "balance" returned, or null when it matched no row. */
export function balanceOf(row: unknown): bigint | null {
  if (row === undefined || row === null) return null;
  return BigInt((row as { balance: bigint | string | number }).balance);
}

/**
 * A debit only if the balance covers it, with its ledger entry, its balance
 * event and whatever else must be written with it (`rows`), as one guarded
 * step: nothing is written unless the account is the platform's and its
 * balance covers the amount. `account` is the account as read before (the
 * event shows it with the balance the debit returns). The step yields the
 * account after, or undefined.
 */
export function guardedDebit(p: Posting, account: AccountRow, rows: readonly SqlInsert[]): SqlStep {
  if (p.amount <= 0n) throw new Error("debit amount must be positive");
  // The entry's balanceAfter is the balance the debit returns.
  const entry = ledgerEntryRow(p, -p.amount, 0n);
  return {
    kind: "guarded",
    ...statement(debitGuard(p)),
    inserts: [
      ...rows,
      { ...entry, fromGuard: { balanceAfter: "balance" } },
      balanceEventOfDebit(p, account),
    ],
  };
}

/** Debits only if the balance covers it; throws InsufficientFundsError, writing nothing, if not. */
export function* debit(p: Posting): SqlProgram<bigint> {
  if (p.amount <= 0n) throw new Error("debit amount must be positive");
  const updated = yield* one(debitGuard(p));
  if (updated === undefined) throw new InsufficientFundsError(p.accountId);
  yield* posted(p, -p.amount, updated);
  return updated.balance;
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
  yield* posted(p, p.amount, updated);
  return updated.balance;
}

/** What follows a balance change: its ledger entry and its event. */
function* posted(p: Posting, signed: bigint, account: AccountRow): SqlProgram<void> {
  yield { kind: "insert", ...ledgerEntryRow(p, signed, account.balance) };
  yield* emitEvent(balanceUpdated(account, p.at));
}
