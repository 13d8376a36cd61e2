import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@payments-sandbox/client";
import { q } from "../src/db/query.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { balanceEvents, withId } from "./money-helpers.js";

type Account = Schemas["InternalAccount"];

/** ISO 13616: an IBAN's check digits make the rearranged number 1 mod 97. */
function ibanValid(iban: string): boolean {
  const numeric = `${iban.slice(4)}${iban.slice(0, 4)}`.replace(/[A-Z]/g, (c) =>
    String(c.charCodeAt(0) - 55),
  );
  return BigInt(numeric) % 97n === 1n;
}

describe.each(databases)("internal accounts on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  async function newCustomer(currencies?: string[]): Promise<string> {
    const { data, error } = await sandbox.client.POST("/customers", {
      body: {
        customerType: "INDIVIDUAL",
        fullName: "Grace Hopper",
        email: "grace@example.com",
        ...(currencies ? { currencies } : {}),
      },
    });
    if (!data) throw new Error(JSON.stringify(error));
    return withId(data).id;
  }

  async function accountsOf(customerId: string): Promise<Account[]> {
    const { data, response } = await sandbox.client.GET("/customers/internal-accounts", {
      params: { query: { customerId } },
    });
    expect(response.status).toBe(200);
    return data!.data;
  }

  async function ledgerSum(accountId: string): Promise<bigint> {
    const entries = await sandbox.server.data.all(
      q.selectFrom("LedgerEntry").selectAll().where("accountId", "=", accountId),
    );
    return entries.reduce((sum, e) => sum + e.amount, 0n);
  }

  const usd = { code: "USD", name: "US Dollar", symbol: "$", decimals: 2 };

  it("opens the customer's account in each platform currency when the customer is created", async () => {
    const customerId = await newCustomer();
    const accounts = await accountsOf(customerId);
    expect(accounts).toHaveLength(1);
    const [account] = accounts;
    expect(account).toMatchObject({
      customerId,
      type: "INTERNAL_FIAT",
      status: "ACTIVE",
      balance: { amount: 0, currency: usd },
      totalBalance: { amount: 0, currency: usd },
    });
    expect(account!.id).toMatch(/^InternalAccount:[0-9a-f-]{36}$/);
    expect(account).not.toHaveProperty("privateEnabled");
    // Where a bank payment would be sent, quoting the account's reference.
    expect(account!.fundingPaymentInstructions).toEqual([
      expect.objectContaining({
        isPlatformAccount: false,
        accountOrWalletInfo: expect.objectContaining({
          accountType: "USD_ACCOUNT",
          routingNumber: "110000000",
          accountNumber: expect.stringMatching(/^[0-9]{11}$/),
          reference: expect.stringMatching(/^SBX-[0-9A-F]{8}$/),
        }),
      }),
    ]);
    // The same account reads the same coordinates every time.
    expect((await accountsOf(customerId))[0]!.fundingPaymentInstructions).toEqual(
      account!.fundingPaymentInstructions,
    );
  });

  it("opens fiat, crypto and (for USDB) embedded-wallet accounts from the customer's currencies", async () => {
    const customerId = await newCustomer(["USD", "EUR", "BTC", "USDB"]);
    const accounts = await accountsOf(customerId);
    const byCurrency = new Map(accounts.map((a) => [a.balance.currency.code, a]));
    expect([...byCurrency.keys()].sort()).toEqual(["BTC", "EUR", "USD", "USDB"]);
    expect(byCurrency.get("USD")!.type).toBe("INTERNAL_FIAT");
    expect(byCurrency.get("EUR")!.type).toBe("INTERNAL_FIAT");
    expect(byCurrency.get("BTC")).toMatchObject({
      type: "INTERNAL_CRYPTO",
      fundingPaymentInstructions: [],
    });
    expect(byCurrency.get("USDB")).toMatchObject({
      type: "EMBEDDED_WALLET",
      privateEnabled: false,
    });
    const eur = byCurrency.get("EUR")!.fundingPaymentInstructions[0]!.accountOrWalletInfo;
    expect(eur.accountType).toBe("EUR_ACCOUNT");
    expect(ibanValid((eur as { iban: string }).iban)).toBe(true);

    const wallets = await sandbox.client.GET("/customers/internal-accounts", {
      params: { query: { customerId, type: "EMBEDDED_WALLET" } },
    });
    expect(wallets.data?.data.map((a) => a.id)).toEqual([byCurrency.get("USDB")!.id]);
    const euros = await sandbox.client.GET("/customers/internal-accounts", {
      params: { query: { customerId, currency: "EUR" } },
    });
    expect(euros.data).toMatchObject({ totalCount: 1, hasMore: false });
    expect(euros.data?.data.map((a) => a.id)).toEqual([byCurrency.get("EUR")!.id]);
  });

  it("opens the account of a currency added to the customer, once", async () => {
    const customerId = await newCustomer(["USD"]);
    for (let i = 0; i < 2; i++) {
      const { response } = await sandbox.client.PATCH("/customers/{customerId}", {
        params: { path: { customerId } },
        body: { customerType: "INDIVIDUAL", currencies: ["USD", "MXN"] },
      });
      expect(response.status).toBe(200);
    }
    const accounts = await accountsOf(customerId);
    expect(accounts.map((a) => a.balance.currency.code).sort()).toEqual(["MXN", "USD"]);
    // Dropping a currency closes nothing: the money stays where it is.
    await sandbox.client.PATCH("/customers/{customerId}", {
      params: { path: { customerId } },
      body: { customerType: "INDIVIDUAL", currencies: ["USD"] },
    });
    expect(await accountsOf(customerId)).toHaveLength(2);
  });

  it("pages through a customer's accounts, newest first, with the total", async () => {
    const customerId = await newCustomer(["USD", "EUR", "GBP"]);
    const first = await sandbox.client.GET("/customers/internal-accounts", {
      params: { query: { customerId, limit: 2 } },
    });
    expect(first.data).toMatchObject({ hasMore: true, totalCount: 3 });
    expect(first.data?.data).toHaveLength(2);
    const second = await sandbox.client.GET("/customers/internal-accounts", {
      params: { query: { customerId, limit: 2, cursor: first.data!.nextCursor! } },
    });
    expect(second.data).toMatchObject({ hasMore: false, totalCount: 3 });
    const seen = [...first.data!.data, ...second.data!.data].map((a) => a.id);
    expect(new Set(seen).size).toBe(3);
  });

  it("funds an account through the ledger", async () => {
    const [account] = await accountsOf(await newCustomer(["EUR"]));
    const path = { accountId: account!.id };
    const first = await sandbox.client.POST("/sandbox/internal-accounts/{accountId}/fund", {
      params: { path },
      body: { amount: 12_345 },
    });
    expect(first.data?.balance).toMatchObject({ amount: 12_345, currency: { code: "EUR" } });
    const second = await sandbox.client.POST("/sandbox/internal-accounts/{accountId}/fund", {
      params: { path },
      body: { amount: 655 },
    });
    expect(second.data?.balance.amount).toBe(13_000);
    expect(second.data?.totalBalance.amount).toBe(13_000);
    const [read] = await accountsOf(account!.customerId!);
    expect(read!.balance.amount).toBe(13_000);
    expect(await ledgerSum(account!.id)).toBe(13_000n);
  });

  it("announces each balance change with INTERNAL_ACCOUNT.BALANCE_UPDATED, carrying the account after it", async () => {
    const [account] = await accountsOf(await newCustomer(["GBP"]));
    expect(await balanceEvents(sandbox.client, account!.id)).toEqual([]);
    const path = { accountId: account!.id };
    const answers = [];
    for (const amount of [500, 250]) {
      const { data } = await sandbox.client.POST("/sandbox/internal-accounts/{accountId}/fund", {
        params: { path },
        body: { amount },
      });
      answers.push(data!);
    }
    // Newest first: each event is the account exactly as that funding answered it.
    expect(await balanceEvents(sandbox.client, account!.id)).toEqual(answers.reverse());
    expect(answers.map((a) => a.balance.amount)).toEqual([750, 500]);
  });

  it("keeps the balance equal to the ledger under concurrent funding", async () => {
    const [account] = await accountsOf(await newCustomer(["MXN"]));
    const path = { accountId: account!.id };
    await Promise.all(
      Array.from({ length: 20 }, () =>
        sandbox.client.POST("/sandbox/internal-accounts/{accountId}/fund", {
          params: { path },
          body: { amount: 100 },
        }),
      ),
    );
    const [read] = await accountsOf(account!.customerId!);
    expect(read!.balance.amount).toBe(2_000);
    expect(await ledgerSum(account!.id)).toBe(2_000n);
    // One event per funding, each with the balance that funding left.
    const balances = (await balanceEvents(sandbox.client, account!.id)).map(
      (a) => a.balance.amount,
    );
    expect(balances.sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, i) => 100 * (i + 1)),
    );
  });

  it("rejects a non-positive or fractional amount", async () => {
    const [account] = await accountsOf(await newCustomer());
    for (const amount of [0, -5, 1.5]) {
      const res = await sandbox.client.POST("/sandbox/internal-accounts/{accountId}/fund", {
        params: { path: { accountId: account!.id } },
        body: { amount },
      });
      expect(res.response.status).toBe(400);
      expect(res.error).toMatchObject({ code: "INVALID_INPUT" });
    }
  });

  it("hides accounts across platforms", async () => {
    const customerId = await newCustomer();
    const [account] = await accountsOf(customerId);
    const other = await sandbox.otherPlatformClient();
    const listed = await other.GET("/customers/internal-accounts", {
      params: { query: { customerId } },
    });
    expect(listed.data).toMatchObject({ data: [], totalCount: 0 });
    const theirs = await other.GET("/platform/internal-accounts");
    expect(theirs.data?.data.map((a) => a.id)).not.toContain(account!.id);
    const fund = await other.POST("/sandbox/internal-accounts/{accountId}/fund", {
      params: { path: { accountId: account!.id } },
      body: { amount: 1 },
    });
    expect(fund.response.status).toBe(404);
    expect((await accountsOf(customerId))[0]!.balance.amount).toBe(0);
  });

  it("keeps the platform's own accounts apart, one per supported currency", async () => {
    const listed = await sandbox.client.GET("/platform/internal-accounts");
    expect(listed.response.status).toBe(200);
    expect(listed.data?.data).toHaveLength(1);
    const [platformUsd] = listed.data!.data;
    expect(platformUsd).toMatchObject({ type: "INTERNAL_FIAT", balance: { currency: usd } });
    expect(platformUsd).not.toHaveProperty("customerId");
    expect(platformUsd!.fundingPaymentInstructions[0]?.isPlatformAccount).toBe(true);
    const customers = await sandbox.client.GET("/customers/internal-accounts", {
      params: { query: { limit: 100 } },
    });
    expect(customers.data?.data.map((a) => a.id)).not.toContain(platformUsd!.id);

    // Funding works on the platform's account like on any other.
    const funded = await sandbox.client.POST("/sandbox/internal-accounts/{accountId}/fund", {
      params: { path: { accountId: platformUsd!.id } },
      body: { amount: 200_000 },
    });
    expect(funded.data?.balance.amount).toBe(200_000);

    // Supporting a currency opens the platform's account in it.
    const config = await sandbox.client.GET("/config");
    const usdConfig = config.data!.supportedCurrencies![0]!;
    const { response } = await sandbox.client.PATCH("/config", {
      body: {
        supportedCurrencies: [
          {
            currencyCode: "USD",
            minAmount: usdConfig.minAmount,
            maxAmount: usdConfig.maxAmount,
            requiredCounterpartyFields: [],
            enabledTransactionTypes: ["INCOMING", "OUTGOING"],
          },
          {
            currencyCode: "EUR",
            minAmount: 1,
            maxAmount: 1_000_000,
            requiredCounterpartyFields: [],
            enabledTransactionTypes: ["INCOMING", "OUTGOING"],
          },
        ],
      },
    });
    expect(response.status).toBe(200);
    const after = await sandbox.client.GET("/platform/internal-accounts");
    expect(after.data?.data.map((a) => a.balance.currency.code).sort()).toEqual(["EUR", "USD"]);
    const euros = await sandbox.client.GET("/platform/internal-accounts", {
      params: { query: { currency: "EUR" } },
    });
    expect(euros.data?.data).toHaveLength(1);
    // The USD account kept its money.
    const dollars = after.data!.data.find((a) => a.id === platformUsd!.id);
    expect(dollars?.balance.amount).toBe(200_000);
    // And new customers now hold both.
    const customerId = await newCustomer();
    expect((await accountsOf(customerId)).map((a) => a.balance.currency.code).sort()).toEqual([
      "EUR",
      "USD",
    ]);
  });
});
