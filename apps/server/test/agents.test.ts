import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { q } from "../src/db/query.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  advanceClock,
  balanceOf,
  createAccount,
  createBankAccount,
  createCustomer,
  eventsAbout,
  expectLedgersBalanced,
  transactionOf,
} from "./money-helpers.js";

const POLICY = { maxTransactionAmount: 100_000, approvalRequiredAbove: 50_000 };

describe.each(databases)("agents on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterEach(async () => {
    await expectLedgersBalanced(sandbox.server.data);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  /** A customer with a funded USD account and a bank account, and an agent acting for them. */
  async function agentSetup(balance = 200_000, bankSuffix = "789") {
    const customer = await createCustomer(sandbox.client);
    const account = await createAccount(sandbox.client, customer.id, "USD", balance);
    const bank = await createBankAccount(sandbox.client, customer.id, bankSuffix);
    const { data: agent, response } = await sandbox.client.POST("/agents", {
      body: { customerId: customer.id, policy: POLICY },
    });
    expect(response.status).toBe(201);
    const { data: token } = await sandbox.client.POST("/agents/device-codes/{code}/redeem", {
      params: { path: { code: agent!.deviceCode } },
    });
    const bearer = `Bearer ${token!.accessToken}`;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await sandbox.rawFetch(path, {
        method,
        auth: bearer,
        ...(body !== undefined
          ? { body: JSON.stringify(body), headers: { "Content-Type": "application/json" } }
          : {}),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    return { customer, account, bank, agent: agent!, token: token!, call };
  }

  it("creates an agent whose device code redeems once for a bearer token", async () => {
    const customer = await createCustomer(sandbox.client);
    const { data: agent } = await sandbox.client.POST("/agents", {
      body: { customerId: customer.id, policy: POLICY },
    });
    expect(agent).toMatchObject({ customerId: customer.id, policy: POLICY });
    expect(agent?.id).toMatch(/^Agent:/);
    const other = await sandbox.otherPlatformClient();
    const foreign = await other.POST("/agents/device-codes/{code}/redeem", {
      params: { path: { code: agent!.deviceCode } },
    });
    expect(foreign.error).toMatchObject({ status: 404, code: "REFERENCE_NOT_FOUND" });
    const { data: token } = await sandbox.client.POST("/agents/device-codes/{code}/redeem", {
      params: { path: { code: agent!.deviceCode } },
    });
    expect(token).toMatchObject({
      tokenType: "Bearer",
      agentId: agent!.id,
      customerId: customer.id,
      expiresIn: 3600,
    });
    const again = await sandbox.client.POST("/agents/device-codes/{code}/redeem", {
      params: { path: { code: agent!.deviceCode } },
    });
    expect(again.error).toMatchObject({ status: 404, code: "REFERENCE_NOT_FOUND" });
    // Only a hash of the token is kept.
    const stored = await sandbox.server.data.all(
      q.selectFrom("AgentAccessToken").selectAll().where("agentId", "=", agent!.id),
    );
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(token!.accessToken);
  });

  it("lets an agent move money within its policy, on its own customer only", async () => {
    const { account, bank, agent, call } = await agentSetup();
    const done = await call("POST", "/transfer-out", {
      source: { accountId: account.id },
      destination: { accountId: bank.id },
      amount: 20_000,
    });
    expect(done.status).toBe(201);
    expect(done.body).toMatchObject({ status: "COMPLETED", agentId: agent.id });
    expect(await balanceOf(sandbox.client, account.id)).toBe(180_000);
    const read = await call("GET", `/transactions/${String(done.body.id)}`);
    expect(read.status).toBe(200);

    const stranger = await createCustomer(sandbox.client, { lastName: "Stranger" });
    const theirs = await createAccount(sandbox.client, stranger.id, "USD", 10_000);
    const theirBank = await createBankAccount(sandbox.client, stranger.id, "789");
    const hidden = await call("POST", "/transfer-out", {
      source: { accountId: theirs.id },
      destination: { accountId: bank.id },
      amount: 1_000,
    });
    expect(hidden).toMatchObject({ status: 404, body: { code: "REFERENCE_NOT_FOUND" } });
    const hiddenBank = await call("POST", "/transfer-in", {
      source: { accountId: theirBank.id },
      destination: { accountId: account.id },
      amount: 1_000,
    });
    expect(hiddenBank).toMatchObject({ status: 404, body: { code: "REFERENCE_NOT_FOUND" } });
    const { data: theirTransfer } = await sandbox.client.POST("/transfer-out", {
      body: {
        source: { accountId: theirs.id },
        destination: { accountId: theirBank.id },
        amount: 500,
      },
    });
    const theirRead = await call("GET", `/transactions/${theirTransfer!.id}`);
    expect(theirRead).toMatchObject({ status: 404, body: { code: "TRANSACTION_NOT_FOUND" } });
    const listed = await call("GET", "/transactions?limit=100");
    const data = listed.body.data as { customerId: string }[];
    expect(data.length).toBeGreaterThan(0);
    expect(new Set(data.map((t) => t.customerId))).toEqual(new Set([agent.customerId]));
    expect(await balanceOf(sandbox.client, theirs.id)).toBe(9_500);
  });

  it("accepts the bearer token only on operations that list AgentAuth", async () => {
    const { customer, account, call } = await agentSetup();
    expect((await call("GET", "/customers")).status).toBe(401);
    const accounts = await call("GET", `/customers/internal-accounts?customerId=${customer.id}`);
    expect(accounts).toMatchObject({ status: 401, body: { code: "UNAUTHORIZED" } });
    const update = await call("PATCH", `/customers/${customer.id}`, {
      customerType: "INDIVIDUAL",
      currencies: ["USD", "EUR"],
    });
    expect(update).toMatchObject({ status: 401, body: { code: "UNAUTHORIZED" } });
    const fund = await call("POST", `/sandbox/internal-accounts/${account.id}/fund`, {
      amount: 1,
    });
    expect(fund.status).toBe(401);
    const bogus = await sandbox.rawFetch("/transactions", { auth: "Bearer agt_not-a-token" });
    expect(bogus.status).toBe(401);
    expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);
  });

  it("refuses an amount above maxTransactionAmount with 400 AMOUNT_OUT_OF_RANGE", async () => {
    const { account, bank, call } = await agentSetup();
    const res = await call("POST", "/transfer-out", {
      source: { accountId: account.id },
      destination: { accountId: bank.id },
      amount: 100_001,
    });
    expect(res).toMatchObject({ status: 400, body: { code: "AMOUNT_OUT_OF_RANGE" } });
    expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);
  });

  it("holds a transfer above approvalRequiredAbove until the platform approves it", async () => {
    const { account, bank, call } = await agentSetup();
    const held = await call("POST", "/transfer-out", {
      source: { accountId: account.id },
      destination: { accountId: bank.id },
      amount: 75_000,
    });
    expect(held).toMatchObject({ status: 201, body: { status: "PENDING_AUTHORIZATION" } });
    expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);
    const id = String(held.body.id);
    // The agent cannot approve its own transaction.
    expect((await call("POST", `/transactions/${id}/approve`)).status).toBe(401);
    const approved = await sandbox.client.POST("/transactions/{transactionId}/approve", {
      params: { path: { transactionId: id } },
    });
    expect(approved.response.status).toBe(200);
    expect(approved.data).toMatchObject({ status: "COMPLETED" });
    expect(await balanceOf(sandbox.client, account.id)).toBe(125_000);
    const twice = await sandbox.client.POST("/transactions/{transactionId}/approve", {
      params: { path: { transactionId: id } },
    });
    expect(twice.error).toMatchObject({
      status: 409,
      code: "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL",
    });
    const events = await eventsAbout(sandbox.server.data, id);
    expect(events.map((e) => e.type)).toEqual([
      "OUTGOING_PAYMENT.PENDING_AUTHORIZATION",
      "OUTGOING_PAYMENT.COMPLETED",
    ]);
  });

  it("approves a held transfer with a delayed outcome, which then runs its course", async () => {
    const { account, bank, call } = await agentSetup(200_000, "005");
    const held = await call("POST", "/transfer-out", {
      source: { accountId: account.id },
      destination: { accountId: bank.id },
      amount: 60_000,
    });
    const id = String(held.body.id);
    const approved = await sandbox.client.POST("/transactions/{transactionId}/approve", {
      params: { path: { transactionId: id } },
    });
    expect(approved.data?.status).toBe("PENDING");
    expect(await balanceOf(sandbox.client, account.id)).toBe(140_000);
    await advanceClock(sandbox.client, 31);
    expect(await transactionOf(sandbox.client, id)).toMatchObject({
      status: "FAILED",
      failureReason: "COUNTERPARTY_POST_TX_FAILED",
    });
    expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);
  });

  it("rejects a held transfer: it fails and nothing moves", async () => {
    const { account, bank, call } = await agentSetup(200_000);
    const held = await call("POST", "/transfer-out", {
      source: { accountId: account.id },
      destination: { accountId: bank.id },
      amount: 90_000,
    });
    const id = String(held.body.id);
    expect((await call("POST", `/transactions/${id}/reject`)).status).toBe(401);
    const rejected = await sandbox.client.POST("/transactions/{transactionId}/reject", {
      params: { path: { transactionId: id } },
      body: { reason: "over budget" },
    });
    expect(rejected.response.status).toBe(200);
    expect(rejected.data).toMatchObject({ status: "FAILED" });
    expect(rejected.data).not.toHaveProperty("refund");
    expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);
    const events = await eventsAbout(sandbox.server.data, id);
    expect(events.map((e) => e.type)).toEqual([
      "OUTGOING_PAYMENT.PENDING_AUTHORIZATION",
      "OUTGOING_PAYMENT.FAILED",
    ]);
  });

  it("keeps a held transfer waiting when the balance cannot cover it at approval", async () => {
    const { account, bank, call } = await agentSetup(60_000);
    const held = await call("POST", "/transfer-out", {
      source: { accountId: account.id },
      destination: { accountId: bank.id },
      amount: 55_000,
    });
    const id = String(held.body.id);
    await sandbox.client.POST("/transfer-out", {
      body: {
        source: { accountId: account.id },
        destination: { accountId: bank.id },
        amount: 10_000,
      },
    });
    const refused = await sandbox.client.POST("/transactions/{transactionId}/approve", {
      params: { path: { transactionId: id } },
    });
    expect(refused.error).toMatchObject({ status: 400, code: "INSUFFICIENT_BALANCE" });
    expect((await transactionOf(sandbox.client, id)).status).toBe("PENDING_AUTHORIZATION");
    expect(await balanceOf(sandbox.client, account.id)).toBe(50_000);
  });

  it("holds an agent's quote execution above the threshold until approved", async () => {
    const { customer, account, call } = await agentSetup();
    const iban = await createBankAccount(sandbox.client, customer.id, "000", "EUR");
    const quote = await call("POST", "/quotes", {
      source: { sourceType: "ACCOUNT", accountId: account.id },
      destination: { destinationType: "ACCOUNT", accountId: iban.id },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 80_000,
    });
    expect(quote.status).toBe(201);
    const quoteId = String(quote.body.id);
    expect((await call("GET", `/quotes/${quoteId}`)).status).toBe(200);
    const executed = await call("POST", `/quotes/${quoteId}/execute`);
    expect(executed).toMatchObject({ status: 200, body: { status: "PROCESSING" } });
    const transactionId = String(executed.body.transactionId);
    expect((await transactionOf(sandbox.client, transactionId)).status).toBe(
      "PENDING_AUTHORIZATION",
    );
    expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);
    const approved = await sandbox.client.POST("/transactions/{transactionId}/approve", {
      params: { path: { transactionId } },
    });
    expect(approved.data?.status).toBe("COMPLETED");
    const after = await sandbox.client.GET("/quotes/{quoteId}", {
      params: { path: { quoteId } },
    });
    expect(after.data?.status).toBe("COMPLETED");
    expect(await balanceOf(sandbox.client, account.id)).toBe(120_000);

    const realtime = await call("POST", "/quotes", {
      source: { sourceType: "REALTIME_FUNDING", currency: "USD" },
      destination: { destinationType: "ACCOUNT", accountId: iban.id },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 1_000,
    });
    expect(realtime).toMatchObject({ status: 400, body: { code: "INVALID_INPUT" } });
    const tooBig = await call("POST", "/quotes", {
      source: { sourceType: "ACCOUNT", accountId: account.id },
      destination: { destinationType: "ACCOUNT", accountId: iban.id },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 150_000,
    });
    expect(tooBig).toMatchObject({ status: 400, body: { code: "AMOUNT_OUT_OF_RANGE" } });
  });

  it("expires the access token after an hour of sandbox time", async () => {
    const { call } = await agentSetup();
    expect((await call("GET", "/transactions")).status).toBe(200);
    await advanceClock(sandbox.client, 3_601);
    expect((await call("GET", "/transactions")).status).toBe(401);
  });
});
