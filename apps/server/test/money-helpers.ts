import { expect } from "vitest";
import type { SandboxClient, Schemas } from "@sandbox/client";
import type { Db } from "../src/db/client.js";

// Shared steps of the money-movement tests, all through the public API.

export async function createCustomer(
  client: SandboxClient,
  options: { lastName?: string; platformCustomerId?: string } = {},
): Promise<Schemas["Customer"]> {
  const lastName = options.lastName ?? "Lovelace";
  const { data, error } = await client.POST("/customers", {
    body: {
      customerType: "INDIVIDUAL",
      ...(options.platformCustomerId ? { platformCustomerId: options.platformCustomerId } : {}),
      personalInfo: {
        firstName: "Ada",
        lastName,
        email: `ada.${lastName.toLowerCase()}@example.com`,
      },
    },
  });
  if (!data) throw new Error(`customer not created: ${JSON.stringify(error)}`);
  return data;
}

export async function createAccount(
  client: SandboxClient,
  customerId: string,
  currency = "USD",
  balance = 0,
  type: "STANDARD" | "EMBEDDED_WALLET" = "STANDARD",
): Promise<Schemas["InternalAccount"]> {
  const { data, error } = await client.POST("/internal-accounts", {
    body: { customerId, currency, type },
  });
  if (!data) throw new Error(`account not created: ${JSON.stringify(error)}`);
  if (balance > 0) await fund(client, data.id, balance);
  return data;
}

export async function fund(client: SandboxClient, accountId: string, amount: number) {
  const { data } = await client.POST("/sandbox/internal-accounts/{accountId}/fund", {
    params: { path: { accountId } },
    body: { amount },
  });
  expect(data?.balance).toBeGreaterThanOrEqual(amount);
}

/** A US bank account whose account number ends in `suffix` (the sandbox magic value). */
export async function createBankAccount(
  client: SandboxClient,
  customerId: string,
  suffix: string,
  currency = "USD",
): Promise<Schemas["ExternalAccount"]> {
  const { data, error } = await client.POST("/external-accounts", {
    body: {
      customerId,
      currency,
      accountType: "US_ACCOUNT",
      beneficiaryName: "Ada Lovelace",
      accountInfo: { accountNumber: `0004567${suffix}`, routingNumber: "021000021" },
    },
  });
  if (!data) throw new Error(`external account not created: ${JSON.stringify(error)}`);
  return data;
}

export async function balanceOf(client: SandboxClient, id: string): Promise<number> {
  const { data } = await client.GET("/internal-accounts/{id}", { params: { path: { id } } });
  if (!data) throw new Error(`no account ${id}`);
  return data.balance;
}

export async function transactionOf(
  client: SandboxClient,
  transactionId: string,
): Promise<Schemas["Transaction"]> {
  const { data } = await client.GET("/transactions/{transactionId}", {
    params: { path: { transactionId } },
  });
  if (!data) throw new Error(`no transaction ${transactionId}`);
  return data;
}

/** Moves the platform's sandbox clock; everything that became due has happened when it returns. */
export async function advanceClock(client: SandboxClient, seconds: number): Promise<void> {
  const { response } = await client.POST("/sandbox/clock/advance", { body: { seconds } });
  expect(response.status).toBe(200);
}

/**
 * Every internal account's balance equals the sum of its ledger entries, and
 * no balance is negative: the invariant money movement must keep.
 */
export async function expectLedgersBalanced(db: Db): Promise<void> {
  const accounts = await db.internalAccount.findMany({ select: { id: true, balance: true } });
  const sums = await db.ledgerEntry.groupBy({ by: ["accountId"], _sum: { amount: true } });
  const byAccount = new Map(sums.map((s) => [s.accountId, s._sum.amount ?? 0n]));
  for (const account of accounts) {
    expect({ id: account.id, balance: account.balance }).toEqual({
      id: account.id,
      balance: byAccount.get(account.id) ?? 0n,
    });
    expect(account.balance >= 0n).toBe(true);
  }
}

/** Types and data of the webhook events recorded about one object, oldest first. */
export async function eventsAbout(
  db: Db,
  objectId: string,
): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const rows = await db.webhookEvent.findMany({
    where: { objectId },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
  });
  return rows.map((r) => {
    const envelope = JSON.parse(r.payload) as { type: string; data: Record<string, unknown> };
    return { type: envelope.type, data: envelope.data };
  });
}

export async function waitFor(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("condition not met in time");
}

/**
 * POST /quotes/{quoteId}/execute. Its 200 is the Quote and its 202 (an
 * embedded wallet's signed-retry challenge) the challenge: split them.
 */
export async function executeQuote(
  client: SandboxClient,
  quoteId: string,
  headers: Record<string, string> = {},
) {
  const res = await client.POST("/quotes/{quoteId}/execute", {
    params: { path: { quoteId }, header: headers },
  });
  return {
    response: res.response,
    error: res.error,
    data: res.response.status === 200 ? (res.data as Schemas["Quote"]) : undefined,
    challenge:
      res.response.status === 202 ? (res.data as Schemas["SignedRequestChallenge"]) : undefined,
  };
}
