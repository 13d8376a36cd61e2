import type { Schemas } from "@payments-sandbox/client";
import { all, insertAll, q, rowOf, type Row } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { newId } from "../../ids.js";

// Nobody opens an internal account by hand: a customer gets one per currency
// when it is created (and when a currency is added to it), the platform one
// per supported currency when the currency is configured.

type AccountRow = Row<"InternalAccount">;
type AccountType = Schemas["InternalAccountType"];

/** The currency of embedded wallets ("Global Accounts"): a customer holding it gets a wallet. */
export const WALLET_CURRENCY = "USDB";

/** Crypto tickers; every other code is a fiat currency. */
const CRYPTO_CURRENCIES: ReadonlySet<string> = new Set(["BTC", "USDC", "USDT", "ETH", "SOL"]);

export function accountTypeFor(currency: string): AccountType {
  if (currency === WALLET_CURRENCY) return "EMBEDDED_WALLET";
  return CRYPTO_CURRENCIES.has(currency) ? "INTERNAL_CRYPTO" : "INTERNAL_FIAT";
}

export interface AccountOwner {
  platformId: string;
  /** null: the platform's own account. */
  customerId: string | null;
}

/** New rows for each currency the owner does not hold yet, in the order given. */
export function newAccountRows(
  owner: AccountOwner,
  currencies: readonly string[],
  at: Date,
  held: ReadonlySet<string> = new Set(),
): AccountRow[] {
  const rows: AccountRow[] = [];
  const seen = new Set(held);
  for (const currency of currencies) {
    if (seen.has(currency)) continue;
    seen.add(currency);
    rows.push({
      id: newId("InternalAccount"),
      platformId: owner.platformId,
      customerId: owner.customerId,
      type: accountTypeFor(currency),
      currency,
      balance: 0n,
      status: "ACTIVE",
      privacyEnabled: false,
      walletPrivateKey: null,
      createdAt: at,
      updatedAt: at,
    });
  }
  return rows;
}

/** Opens the accounts the owner lacks among `currencies`; inside the transaction that adds them. */
export function* openMissingAccounts(
  owner: AccountOwner,
  currencies: readonly string[],
  at: Date,
): SqlProgram<void> {
  const base = q
    .selectFrom("InternalAccount")
    .select("currency")
    .where("platformId", "=", owner.platformId);
  const held = yield* all(
    owner.customerId === null
      ? base.where("customerId", "is", null)
      : base.where("customerId", "=", owner.customerId),
  );
  const rows = newAccountRows(owner, currencies, at, new Set(held.map((row) => row.currency)));
  yield* insertAll(rows.map((row) => rowOf("InternalAccount", row)));
}
