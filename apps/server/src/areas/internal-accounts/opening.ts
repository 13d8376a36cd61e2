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
  /** The customer's email: a wallet opened for it starts with an EMAIL_OTP credential on it. */
  email?: string | null;
}

type AuthMethodRow = Row<"AuthMethod">;

/**
 * The first credential of each new embedded wallet: EMAIL_OTP on its
 * customer's email, made with the account and so with no signature (a wallet
 * could not sign for its own first credential). No email, no credential:
 * such a wallet registers its first one with POST /auth/credentials, unsigned.
 * Its first code is asked for with POST /auth/credentials/{id}/challenge.
 */
export function firstCredentialRows(
  accounts: readonly AccountRow[],
  email: string | null | undefined,
): AuthMethodRow[] {
  if (!email) return [];
  return accounts
    .filter((account) => account.type === "EMBEDDED_WALLET" && account.customerId !== null)
    .map((account) => ({
      id: newId("AuthMethod"),
      platformId: account.platformId,
      accountId: account.id,
      type: "EMAIL_OTP",
      nickname: email,
      credentialId: null,
      oauthIssuer: null,
      oauthAudience: null,
      oauthSubject: null,
      passkeyPublicKey: null,
      passkeyCounter: null,
      passkeyTransports: null,
      otpTargetPrivateKey: null,
      otpExpiresAt: null,
      createdAt: account.createdAt,
      updatedAt: account.createdAt,
    }));
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

/**
 * Opens the accounts the owner lacks among `currencies`, with each new
 * wallet's first credential; inside the transaction that adds them.
 */
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
  yield* insertAll([
    ...rows.map((row) => rowOf("InternalAccount", row)),
    ...firstCredentialRows(rows, owner.email).map((row) => rowOf("AuthMethod", row)),
  ]);
}
