// Steps the quote tests share: an IBAN with a magic suffix, a quote to it,
// executing and reading a quote. Each takes the client of the platform it acts for.
import type { SandboxClient, Schemas } from "@payments-sandbox/client";
import { createBankAccount, executeQuote } from "../money-helpers.js";

type Quote = Schemas["Quote"];

/** What the quote tests fund an account with. */
export const FUNDED = 20_000;

/** A EUR IBAN whose last 3 digits are `suffix`. */
export function createIban(client: SandboxClient, customerId: string, suffix: string) {
  return createBankAccount(client, customerId, suffix, "EUR");
}

export async function quoteToIban(
  client: SandboxClient,
  internalAccountId: string,
  externalAccountId: string,
  amount = 10_000,
): Promise<Quote> {
  const { data, error } = await client.POST("/quotes", {
    body: {
      source: { sourceType: "ACCOUNT", accountId: internalAccountId },
      destination: { destinationType: "ACCOUNT", accountId: externalAccountId },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: amount,
    },
  });
  if (!data) throw new Error(JSON.stringify(error));
  return data;
}

export function execute(client: SandboxClient, quoteId: string, idempotencyKey?: string) {
  return executeQuote(client, quoteId, idempotencyKey ? { "Idempotency-Key": idempotencyKey } : {});
}

export async function quoteOf(client: SandboxClient, quoteId: string): Promise<Quote> {
  const { data } = await client.GET("/quotes/{quoteId}", { params: { path: { quoteId } } });
  if (!data) throw new Error(`no quote ${quoteId}`);
  return data;
}
