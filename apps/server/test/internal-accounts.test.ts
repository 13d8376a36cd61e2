import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { q } from "../src/db/query.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { withId } from "./money-helpers.js";

describe.each(databases)("internal accounts on %s", (kind) => {
  let sandbox: TestSandbox;
  let customerId: string;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
    const { data } = await sandbox.client.POST("/customers", {
      body: {
        customerType: "INDIVIDUAL",
        fullName: "Grace Hopper",
        email: "grace@example.com",
      },
    });
    customerId = withId(data!).id;
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  async function ledgerSum(accountId: string): Promise<bigint> {
    const entries = await sandbox.server.data.all(
      q.selectFrom("LedgerEntry").selectAll().where("accountId", "=", accountId),
    );
    return entries.reduce((sum, e) => sum + e.amount, 0n);
  }

  it("creates a standard account with a zero balance", async () => {
    const { data, response } = await sandbox.client.POST("/internal-accounts", {
      body: { customerId, currency: "USD", type: "STANDARD" },
    });
    expect(response.status).toBe(201);
    expect(data).toMatchObject({
      customerId,
      currency: "USD",
      type: "STANDARD",
      balance: 0,
      status: "ACTIVE",
    });
    expect(data?.id).toMatch(/^InternalAccount:[0-9a-f-]{36}$/);
    expect(data?.authMethods).toBeUndefined();
  });

  it("creates an embedded wallet with its first EMAIL_OTP credential from the customer's email", async () => {
    const { data } = await sandbox.client.POST("/internal-accounts", {
      body: { customerId, currency: "USD", type: "EMBEDDED_WALLET" },
    });
    expect(data?.authMethods).toHaveLength(1);
    expect(data?.authMethods?.[0]).toMatchObject({
      type: "EMAIL_OTP",
      nickname: "grace@example.com",
      accountId: data!.id,
    });
    expect(data?.authMethods?.[0]?.id).toMatch(/^AuthMethod:/);
  });

  it("funds an account through the ledger", async () => {
    const { data: account } = await sandbox.client.POST("/internal-accounts", {
      body: { customerId, currency: "EUR", type: "STANDARD" },
    });
    const path = { accountId: account!.id };
    const first = await sandbox.client.POST("/sandbox/internal-accounts/{accountId}/fund", {
      params: { path },
      body: { amount: 12_345 },
    });
    expect(first.data?.balance).toBe(12_345);
    const second = await sandbox.client.POST("/sandbox/internal-accounts/{accountId}/fund", {
      params: { path },
      body: { amount: 655 },
    });
    expect(second.data?.balance).toBe(13_000);
    const got = await sandbox.client.GET("/internal-accounts/{id}", {
      params: { path: { id: account!.id } },
    });
    expect(got.data?.balance).toBe(13_000);
    expect(await ledgerSum(account!.id)).toBe(13_000n);
  });

  it("keeps the balance equal to the ledger under concurrent funding", async () => {
    const { data: account } = await sandbox.client.POST("/internal-accounts", {
      body: { customerId, currency: "MXN", type: "STANDARD" },
    });
    const path = { accountId: account!.id };
    await Promise.all(
      Array.from({ length: 20 }, () =>
        sandbox.client.POST("/sandbox/internal-accounts/{accountId}/fund", {
          params: { path },
          body: { amount: 100 },
        }),
      ),
    );
    const got = await sandbox.client.GET("/internal-accounts/{id}", {
      params: { path: { id: account!.id } },
    });
    expect(got.data?.balance).toBe(2_000);
    expect(await ledgerSum(account!.id)).toBe(2_000n);
  });

  it("rejects a non-positive or fractional amount", async () => {
    const { data: account } = await sandbox.client.POST("/internal-accounts", {
      body: { customerId, currency: "USD", type: "STANDARD" },
    });
    for (const amount of [0, -5, 1.5]) {
      const res = await sandbox.client.POST("/sandbox/internal-accounts/{accountId}/fund", {
        params: { path: { accountId: account!.id } },
        body: { amount },
      });
      expect(res.response.status).toBe(400);
      expect(res.error).toMatchObject({ code: "INVALID_INPUT" });
    }
  });

  it("lists a customer's accounts and filters by currency", async () => {
    const { data } = await sandbox.client.GET("/internal-accounts", {
      params: { query: { customerId, currency: "EUR" } },
    });
    expect(data!.data.length).toBeGreaterThan(0);
    expect(data!.data.every((a) => a.currency === "EUR" && a.customerId === customerId)).toBe(true);
  });

  it("refuses an account for an unknown customer and hides accounts across platforms", async () => {
    const res = await sandbox.client.POST("/internal-accounts", {
      body: {
        customerId: "Customer:00000000-0000-4000-8000-000000000000",
        currency: "USD",
        type: "STANDARD",
      },
    });
    expect(res.response.status).toBe(404);
    const { data: account } = await sandbox.client.POST("/internal-accounts", {
      body: { customerId, currency: "USD", type: "STANDARD" },
    });
    const other = await sandbox.otherPlatformClient();
    const got = await other.GET("/internal-accounts/{id}", {
      params: { path: { id: account!.id } },
    });
    expect(got.response.status).toBe(404);
    const fund = await other.POST("/sandbox/internal-accounts/{accountId}/fund", {
      params: { path: { accountId: account!.id } },
      body: { amount: 1 },
    });
    expect(fund.response.status).toBe(404);
    const mine = await sandbox.client.GET("/internal-accounts/{id}", {
      params: { path: { id: account!.id } },
    });
    expect(mine.data?.balance).toBe(0);
  });
});
