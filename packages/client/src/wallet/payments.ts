import { createStamp } from "@payments-sandbox/crypto";
import type { SandboxClient, Schemas } from "../types.js";
import { ok, WalletFlowError } from "./errors.js";
import { privateKeyOf, type Signer } from "./keys.js";

// Paying from an embedded wallet: a quote's payloadToSign, stamped by the
// wallet's session, executes it.

export type Quote = Schemas["Quote"];
export type QuoteRequest = Schemas["QuoteRequest"];

export interface WalletPaymentOptions {
  /** Sent as `Idempotency-Key` on the execution, so it can be retried safely. */
  idempotencyKey?: string;
}

/**
 * What the wallet signs to pay `quote`: the `payloadToSign` of its
 * EMBEDDED_WALLET payment instructions. A quote from any other source has
 * none (WalletFlowError `wallet-quote`).
 */
export function walletPayloadToSign(quote: Quote): string {
  for (const { accountOrWalletInfo: info } of quote.paymentInstructions ?? []) {
    if (info.accountType === "EMBEDDED_WALLET") return info.payloadToSign;
  }
  throw new WalletFlowError(
    "wallet-quote",
    `quote ${quote.id} carries no payloadToSign: its source is not an EMBEDDED_WALLET account`,
  );
}

/**
 * Executes a quote from an embedded wallet in one call: its `payloadToSign`
 * is stamped, byte for byte, with `signer` (an active session of the source
 * wallet) and sent in `Service-Wallet-Signature`. Resolves to the executed
 * quote; a refusal throws SandboxApiError (401 `WALLET_SIGNATURE_INVALID`
 * when `signer` is not an active session of that wallet).
 */
export async function executeWalletQuote(
  api: SandboxClient,
  quote: Quote,
  signer: Signer,
  options: WalletPaymentOptions = {},
): Promise<Quote> {
  const header = {
    "Service-Wallet-Signature": createStamp(walletPayloadToSign(quote), privateKeyOf(signer)),
    ...(options.idempotencyKey !== undefined ? { "Idempotency-Key": options.idempotencyKey } : {}),
  };
  return ok(
    await api.POST("/quotes/{quoteId}/execute", {
      params: { path: { quoteId: quote.id }, header },
    }),
  );
}

/**
 * Pays from an embedded wallet: creates the quote `request` describes (its
 * source the wallet), stamps the quote's `payloadToSign` with `signer` and
 * executes it, once. Resolves to the executed quote.
 *
 * ```ts
 * const paid = await payFromWallet(api, {
 *   source: { sourceType: "ACCOUNT", accountId: walletAccountId },
 *   destination: { destinationType: "ACCOUNT", accountId: bankAccountId },
 *   lockedCurrencySide: "SENDING",
 *   lockedCurrencyAmount: 1_000,
 * }, wallet);
 * ```
 */
export async function payFromWallet(
  api: SandboxClient,
  request: QuoteRequest,
  signer: Signer,
  options: WalletPaymentOptions = {},
): Promise<Quote> {
  const quote = ok(await api.POST("/quotes", { body: request }));
  return executeWalletQuote(api, quote, signer, options);
}
