import type { Tx } from "../../db/client.js";
import { newId } from "../../ids.js";
import { MAX_AMOUNT } from "./amount-range.js";
import { insufficientBalance } from "./balance-guard.js";
import { balanceOutOfRange, InsufficientFundsError } from "./ledger.js";

// TEMPORARY: the Prisma ledger, until its last caller moves to ledger.ts.

// A balance changes only here, and only together with the ledger entry that
// explains it. Callers run these inside a transaction. Both directions are
// guarded in the UPDATE itself: a debit never takes a balance below zero, a
// credit never takes it above MAX_AMOUNT (the API's range).

export interface Posting {
  platformId: string;
  accountId: string;
  /** Positive minor units. */
  amount: bigint;
  kind: string;
  reference?: string;
  at: Date;
}

export { InsufficientFundsError };

function ledgerEntryRow(p: Posting, signed: bigint, balanceAfter: bigint) {
  return {
    id: newId("LedgerEntry"),
    platformId: p.platformId,
    accountId: p.accountId,
    amount: signed,
    balanceAfter,
    kind: p.kind,
    reference: p.reference ?? null,
    createdAt: p.at,
  };
}

async function record(tx: Tx, p: Posting, signed: bigint): Promise<bigint> {
  const account = await tx.internalAccount.findUniqueOrThrow({
    where: { id: p.accountId },
    select: { balance: true },
  });
  await tx.ledgerEntry.create({ data: ledgerEntryRow(p, signed, account.balance) });
  return account.balance;
}

/** Credits only if the balance stays in range: a conditional update, not read-then-write. */
export async function credit(tx: Tx, p: Posting): Promise<bigint> {
  if (p.amount <= 0n) throw new Error("credit amount must be positive");
  const { count } = await tx.internalAccount.updateMany({
    where: { id: p.accountId, balance: { lte: MAX_AMOUNT - p.amount } },
    data: { balance: { increment: p.amount }, updatedAt: p.at },
  });
  if (count !== 1) {
    const exists = await tx.internalAccount.count({ where: { id: p.accountId } });
    if (exists === 0) throw new Error(`account ${p.accountId} not found`);
    throw balanceOutOfRange(p);
  }
  return record(tx, p, p.amount);
}

/** Debits only if the balance covers it: a conditional update, not read-then-write. */
export async function debit(tx: Tx, p: Posting): Promise<bigint> {
  if (p.amount <= 0n) throw new Error("debit amount must be positive");
  const { count } = await tx.internalAccount.updateMany({
    where: { id: p.accountId, balance: { gte: p.amount } },
    data: { balance: { decrement: p.amount }, updatedAt: p.at },
  });
  if (count !== 1) throw new InsufficientFundsError(p.accountId);
  return record(tx, p, -p.amount);
}

/** debitOrRefuse (balance-guard.ts) inside a Prisma transaction. */
export async function debitOrRefuseViaPrisma(tx: Tx, posting: Posting): Promise<void> {
  try {
    await debit(tx, posting);
  } catch (err) {
    if (err instanceof InsufficientFundsError) throw insufficientBalance(posting);
    throw err;
  }
}
