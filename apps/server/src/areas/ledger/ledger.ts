import type { Tx } from "../../db/client.js";
import { newId } from "../../ids.js";

// A balance changes only here, and only together with the ledger entry that
// explains it. Callers run these inside a transaction.

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

/** The entry that explains one balance change (shared with ledger-sql.ts). */
export function ledgerEntryRow(p: Posting, signed: bigint, balanceAfter: bigint) {
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

export async function credit(tx: Tx, p: Posting): Promise<bigint> {
  if (p.amount <= 0n) throw new Error("credit amount must be positive");
  await tx.internalAccount.update({
    where: { id: p.accountId },
    data: { balance: { increment: p.amount }, updatedAt: p.at },
  });
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
