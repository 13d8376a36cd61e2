import { expect } from "vitest";
import type { SandboxClient, Schemas } from "@payments-sandbox/client";
import type { Database } from "../src/db/database.js";
import type { SelectQueryBuilder } from "kysely";
import { countOf, q } from "../src/db/query.js";
import type { Tables } from "../src/db/tables.js";
import { SANDBOX_SCA_CODE } from "@payments-sandbox/sandbox-rules";

// Shared steps of the money-movement tests, all through the public API.

/** A customer as the sandbox answers it: the live contract leaves `id` optional, the sandbox always sends it. */
export type CreatedCustomer = Schemas["CustomerOneOf"] & { id: string };

export function withId(customer: Schemas["CustomerOneOf"]): CreatedCustomer {
  if (customer.id === undefined) throw new Error("the customer was answered without its id");
  return { ...customer, id: customer.id };
}

export async function createCustomer(
  client: SandboxClient,
  options: { lastName?: string; platformCustomerId?: string; region?: string } = {},
): Promise<CreatedCustomer> {
  const lastName = options.lastName ?? "Lovelace";
  const { data, error } = await client.POST("/customers", {
    body: {
      customerType: "INDIVIDUAL",
      ...(options.platformCustomerId ? { platformCustomerId: options.platformCustomerId } : {}),
      ...(options.region ? { region: options.region } : {}),
      fullName: `Ada ${lastName}`,
      email: `ada.${lastName.toLowerCase()}@example.com`,
    },
  });
  if (!data) throw new Error(`customer not created: ${JSON.stringify(error)}`);
  return withId(data);
}

export type Account = Schemas["InternalAccount"];

/** Who holds each account a helper handed out, so its balance can be read back by id. */
const holders = new Map<string, { customerId?: string; currency: string }>();

/** Records an account a test made some other way, so balanceOf can read it. */
export function rememberAccount(id: string, holder: { customerId?: string; currency: string }) {
  holders.set(id, holder);
}

async function findAccount(
  client: SandboxClient,
  customerId: string,
  currency: string,
): Promise<Account | undefined> {
  const { data, error } = await client.GET("/customers/internal-accounts", {
    params: { query: { customerId, currency } },
  });
  if (!data) throw new Error(`accounts not listed: ${JSON.stringify(error)}`);
  return data.data.find((account) => account.type !== "EMBEDDED_WALLET") ?? data.data[0];
}

/**
 * The customer's account in `currency`, funded with `balance`. Accounts are
 * opened with the customer, one per currency; a currency the customer does
 * not hold yet is added to it, which opens its account.
 */
export async function createAccount(
  client: SandboxClient,
  customerId: string,
  currency = "USD",
  balance = 0,
): Promise<Account> {
  let account = await findAccount(client, customerId, currency);
  if (!account) {
    const { data: customer } = await client.GET("/customers/{customerId}", {
      params: { path: { customerId } },
    });
    if (!customer) throw new Error(`no customer ${customerId}`);
    const { error } = await client.PATCH("/customers/{customerId}", {
      params: { path: { customerId } },
      body: {
        customerType: customer.customerType,
        currencies: [...(customer.currencies ?? []), currency],
      },
    });
    if (error) throw new Error(`currency not added: ${JSON.stringify(error)}`);
    account = await findAccount(client, customerId, currency);
    if (!account) throw new Error(`adding ${currency} opened no account`);
  }
  holders.set(account.id, { customerId, currency });
  if (balance > 0) await fund(client, account.id, balance);
  return account;
}

/** One of the platform's own accounts. */
export async function platformAccount(client: SandboxClient, currency = "USD"): Promise<Account> {
  const { data } = await client.GET("/platform/internal-accounts", {
    params: { query: { currency } },
  });
  const account = data?.data[0];
  if (!account) throw new Error(`the platform has no ${currency} account`);
  holders.set(account.id, { currency });
  return account;
}

export async function fund(client: SandboxClient, accountId: string, amount: number) {
  const { data } = await client.POST("/sandbox/internal-accounts/{accountId}/fund", {
    params: { path: { accountId } },
    body: { amount },
  });
  expect(data?.balance.amount).toBeGreaterThanOrEqual(amount);
}

type AccountInfoCreate = Schemas["ExternalAccountCreateInfoOneOf"];

/**
 * Bank account details in `currency` whose primary identifier (account
 * number, IBAN, CLABE) ends in `suffix`, the sandbox magic value.
 */
export function bankAccountInfo(suffix: string, currency = "USD"): AccountInfoCreate {
  const person = { beneficiaryType: "INDIVIDUAL" as const, fullName: "Ada Lovelace" };
  switch (currency) {
    case "USD":
      return {
        accountType: "USD_ACCOUNT",
        accountNumber: `0004567${suffix}`,
        routingNumber: "021000021",
        beneficiary: person,
      };
    case "EUR":
      return {
        accountType: "EUR_ACCOUNT",
        iban: `DE89370400440532013${suffix}`,
        beneficiary: { ...person, countryOfResidence: "DE" },
      };
    case "MXN":
      return {
        accountType: "MXN_ACCOUNT",
        clabeNumber: `032180000118359${suffix}`,
        beneficiary: person,
      };
    case "GBP":
      return {
        accountType: "GBP_ACCOUNT",
        sortCode: "040004",
        accountNumber: `12345${suffix}`,
        beneficiary: person,
      };
    case "CAD":
      return {
        accountType: "CAD_ACCOUNT",
        bankCode: "001",
        branchCode: "00011",
        accountNumber: `1234567${suffix}`,
        beneficiary: person,
      };
    default:
      throw new Error(`no bank account helper for ${currency}`);
  }
}

/**
 * A customer's bank account in `currency` whose identifier ends in `suffix`;
 * the one already registered (409 CONFLICT names it) when asked twice.
 */
export async function createBankAccount(
  client: SandboxClient,
  customerId: string,
  suffix: string,
  currency = "USD",
): Promise<Schemas["ExternalAccount"]> {
  const { data, error } = await client.POST("/customers/external-accounts", {
    body: { customerId, currency, accountInfo: bankAccountInfo(suffix, currency) },
  });
  if (data) return data;
  const existing = (error as { code?: string; details?: { externalAccountId?: string } })?.details
    ?.externalAccountId;
  if (existing) {
    const read = await client.GET("/customers/external-accounts/{externalAccountId}", {
      params: { path: { externalAccountId: existing } },
    });
    if (read.data) return read.data;
  }
  throw new Error(`external account not created: ${JSON.stringify(error)}`);
}

/** An account's balance, read back through the list its holder's accounts are in. */
export async function balanceOf(client: SandboxClient, id: string): Promise<number> {
  const holder = holders.get(id);
  if (!holder) throw new Error(`account ${id} was not opened through these helpers`);
  const { data } = holder.customerId
    ? await client.GET("/customers/internal-accounts", {
        params: { query: { customerId: holder.customerId, currency: holder.currency } },
      })
    : await client.GET("/platform/internal-accounts", {
        params: { query: { currency: holder.currency } },
      });
  const account = data?.data.find((candidate) => candidate.id === id);
  if (!account) throw new Error(`no account ${id}`);
  return account.balance.amount;
}

export async function transactionOf(
  client: SandboxClient,
  transactionId: string,
): Promise<Schemas["IncomingTransaction"] | Schemas["OutgoingTransaction"]> {
  const { data } = await client.GET("/transactions/{transactionId}", {
    params: { path: { transactionId } },
  });
  if (!data) throw new Error(`no transaction ${transactionId}`);
  if (data.type === "CARD") throw new Error(`${transactionId} is a card transaction`);
  return data;
}

/** Moves the platform's sandbox clock; everything that became due has happened when it returns. */
export async function advanceClock(client: SandboxClient, seconds: number): Promise<void> {
  const { response } = await client.POST("/sandbox/clock/advance", { body: { seconds } });
  expect(response.status).toBe(200);
}

/**
 * Every internal account's balance equals the sum of its ledger entries and
 * is the running balance one of them recorded, and no balance is negative:
 * the invariant money movement must keep. test/ledgers-balanced.ts checks it
 * after every test, on every sandbox then running.
 */
export async function expectLedgersBalanced(db: Database): Promise<void> {
  const accounts = await db.all(q.selectFrom("InternalAccount").select(["id", "balance"]));
  const entries = await db.all(
    q.selectFrom("LedgerEntry").select(["accountId", "amount", "balanceAfter"]),
  );
  const byAccount = new Map<string, { sum: bigint; after: bigint[] }>();
  for (const e of entries) {
    const of = byAccount.get(e.accountId) ?? { sum: 0n, after: [] };
    of.sum += e.amount;
    of.after.push(e.balanceAfter);
    byAccount.set(e.accountId, of);
  }
  for (const account of accounts) {
    const ledger = byAccount.get(account.id);
    expect({ id: account.id, balance: account.balance }).toEqual({
      id: account.id,
      balance: ledger?.sum ?? 0n,
    });
    expect(account.balance >= 0n, `balance of ${account.id}`).toBe(true);
    // The balance is also the running balance some entry recorded.
    if (ledger) expect(ledger.after, `ledger of ${account.id}`).toContain(account.balance);
  }
}

/** How many rows the statement selects: `countRows(db, q.selectFrom("Quote"))`. */
export async function countRows<TB extends keyof Tables>(
  db: Database,
  from: SelectQueryBuilder<Tables, TB, object>,
): Promise<number> {
  return countOf(await db.one(from.select((eb) => eb.fn.countAll().as("count"))));
}

/**
 * The accounts that INTERNAL_ACCOUNT.BALANCE_UPDATED events carried about one
 * account (at most 100), read from the event log, newest first.
 */
export async function balanceEvents(client: SandboxClient, accountId: string): Promise<Account[]> {
  const { data, error } = await client.GET("/sandbox/webhooks/events", {
    params: {
      query: { type: "INTERNAL_ACCOUNT.BALANCE_UPDATED", objectId: accountId, limit: 100 },
    },
  });
  if (!data) throw new Error(`event log: ${JSON.stringify(error)}`);
  return data.data.map((event) => event.payload.data as Account);
}

/** Types and data of the webhook events recorded about one object, oldest first. */
export async function eventsAbout(
  db: Database,
  objectId: string,
): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const rows = await db.all(
    q
      .selectFrom("WebhookEvent")
      .select("payload")
      .where("objectId", "=", objectId)
      .orderBy("createdAt")
      .orderBy("id"),
  );
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

/** POST /quotes/{quoteId}/execute, with the headers given (a wallet's stamp, an Idempotency-Key). */
export async function executeQuote(
  client: SandboxClient,
  quoteId: string,
  headers: Record<string, string> = {},
) {
  return client.POST("/quotes/{quoteId}/execute", {
    params: { path: { quoteId }, header: headers },
  });
}

/**
 * Logs the customer in through SCA (enrolling TOTP first if it has no code
 * factor): a quote's authorization needs the session this opens.
 */
export async function logInWithSca(client: SandboxClient, customerId: string): Promise<string> {
  const query = { params: { query: { customerId } } };
  const factors = (await client.GET("/sca/factors", query)).data?.factors ?? [];
  let factor: "SMS_OTP" | "TOTP" | undefined = factors.find(
    (f): f is { factor: "SMS_OTP" | "TOTP" } => f.factor === "SMS_OTP" || f.factor === "TOTP",
  )?.factor;
  if (factor === undefined) {
    const { data } = await client.POST("/sca/factors", { ...query, body: { type: "TOTP" } });
    if (data?.type !== "TOTP") throw new Error("no TOTP enrolment");
    const confirmed = await client.POST("/sca/factors/confirm", {
      ...query,
      body: { type: "TOTP", secret: data.secret, code: SANDBOX_SCA_CODE },
    });
    expect(confirmed.response.status).toBe(200);
    factor = "TOTP";
  }
  const started = await client.POST("/sca/login/start", { ...query, body: { factor } });
  const { data, error } = await client.POST("/sca/login/complete", {
    ...query,
    body: {
      factor,
      code: SANDBOX_SCA_CODE,
      endUserIpAddress: "203.0.113.42",
      ...(started.data?.challengeId ? { challengeId: started.data.challengeId } : {}),
    },
  });
  if (!data?.sessionExpiresAt) throw new Error(`SCA login failed: ${JSON.stringify(error)}`);
  return data.sessionExpiresAt;
}
