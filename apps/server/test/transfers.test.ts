import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TRANSFER_TABLE } from "@sandbox/sandbox-rules";
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
  waitFor,
} from "./money-helpers.js";

// Transfer suffix table rows (packages/sandbox-rules), each for both directions.
const FAIL_AT_ONCE = [
  ["002", "INSUFFICIENT_FUNDS"],
  ["003", "ACCOUNT_CLOSED"],
  ["004", "BANK_REJECTED"],
] as const;

describe.each(databases)("transfers on %s", (kind) => {
  let sandbox: TestSandbox;
  let customerId: string;
  beforeAll(async () => {
    // A fast poll, so the one real-time test below sees its job fire promptly.
    sandbox = await startSandbox(kind, { env: { JOB_POLL_MS: "50" } });
  });
  // Accounts are opened with their customer, one per currency: each test
  // gets its own customer, so its accounts start empty.
  beforeEach(async () => {
    customerId = (await createCustomer(sandbox.client)).id;
  });
  afterEach(async () => {
    await expectLedgersBalanced(sandbox.server.data);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("covers every row of the transfer table in this test file", () => {
    const tested = [...FAIL_AT_ONCE.map(([s]) => s), "005"];
    expect(TRANSFER_TABLE.rows.map((r) => r.match).sort()).toEqual(tested.sort());
  });

  it("transfers in with any other suffix: completes and credits the account", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD");
    const bank = await createBankAccount(sandbox.client, customerId, "789");
    const { data, response } = await sandbox.client.POST("/transfer-in", {
      body: { internalAccountId: account.id, externalAccountId: bank.id, amount: 5_000 },
    });
    expect(response.status).toBe(201);
    expect(data).toMatchObject({
      type: "TRANSFER_IN",
      status: "COMPLETED",
      direction: "CREDIT",
      amount: 5_000,
      currency: "USD",
      internalAccountId: account.id,
      externalAccountId: bank.id,
      customerId,
    });
    expect(data?.completedAt).toBeDefined();
    expect(await balanceOf(sandbox.client, account.id)).toBe(5_000);
    const events = await eventsAbout(sandbox.server.data, data!.id);
    expect(events.map((e) => [e.type, e.data.status])).toEqual([
      ["TRANSACTION.STATUS_CHANGE", "COMPLETED"],
    ]);
  });

  it("transfers out with any other suffix: completes and debits the account", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 10_000);
    const bank = await createBankAccount(sandbox.client, customerId, "000");
    const { data, response } = await sandbox.client.POST("/transfer-out", {
      body: { internalAccountId: account.id, externalAccountId: bank.id, amount: 2_500 },
    });
    expect(response.status).toBe(201);
    expect(data).toMatchObject({ type: "TRANSFER_OUT", status: "COMPLETED", direction: "DEBIT" });
    expect(await balanceOf(sandbox.client, account.id)).toBe(7_500);
  });

  for (const [suffix, reason] of FAIL_AT_ONCE) {
    it(`fails a transfer in with suffix ${suffix} at once (${reason}); nothing is credited`, async () => {
      const account = await createAccount(sandbox.client, customerId, "USD");
      const bank = await createBankAccount(sandbox.client, customerId, suffix);
      const { data } = await sandbox.client.POST("/transfer-in", {
        body: { internalAccountId: account.id, externalAccountId: bank.id, amount: 1_000 },
      });
      expect(data).toMatchObject({ status: "FAILED", failureReason: reason });
      expect(await balanceOf(sandbox.client, account.id)).toBe(0);
    });

    it(`fails a transfer out with suffix ${suffix} at once (${reason}); the money stays`, async () => {
      const account = await createAccount(sandbox.client, customerId, "USD", 3_000);
      const bank = await createBankAccount(sandbox.client, customerId, suffix);
      const { data } = await sandbox.client.POST("/transfer-out", {
        body: { internalAccountId: account.id, externalAccountId: bank.id, amount: 1_000 },
      });
      expect(data).toMatchObject({ status: "FAILED", failureReason: reason });
      expect(await balanceOf(sandbox.client, account.id)).toBe(3_000);
    });
  }

  it("keeps a transfer in with suffix 005 pending about 30 s, then fails it", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD");
    const bank = await createBankAccount(sandbox.client, customerId, "005");
    const { data } = await sandbox.client.POST("/transfer-in", {
      body: { internalAccountId: account.id, externalAccountId: bank.id, amount: 1_000 },
    });
    expect(data?.status).toBe("PENDING");
    await advanceClock(sandbox.client, 20);
    expect((await transactionOf(sandbox.client, data!.id)).status).toBe("PENDING");
    await advanceClock(sandbox.client, 15);
    const failed = await transactionOf(sandbox.client, data!.id);
    expect(failed).toMatchObject({ status: "FAILED", failureReason: "TIMEOUT" });
    expect(await balanceOf(sandbox.client, account.id)).toBe(0);
    const events = await eventsAbout(sandbox.server.data, data!.id);
    expect(events.map((e) => e.data.status)).toEqual(["PENDING", "FAILED"]);
  });

  it("holds a transfer out with suffix 005 for about 30 s, then fails it and credits the money back", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 4_000);
    const bank = await createBankAccount(sandbox.client, customerId, "005");
    const { data } = await sandbox.client.POST("/transfer-out", {
      body: { internalAccountId: account.id, externalAccountId: bank.id, amount: 1_500 },
    });
    expect(data?.status).toBe("PENDING");
    expect(await balanceOf(sandbox.client, account.id)).toBe(2_500);
    await advanceClock(sandbox.client, 35);
    expect(await transactionOf(sandbox.client, data!.id)).toMatchObject({
      status: "FAILED",
      failureReason: "TIMEOUT",
    });
    expect(await balanceOf(sandbox.client, account.id)).toBe(4_000);
  });

  it("fails a pending 005 transfer out in real time, with no call to the clock", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 2_000);
    const bank = await createBankAccount(sandbox.client, customerId, "005");
    const { data } = await sandbox.client.POST("/transfer-out", {
      body: { internalAccountId: account.id, externalAccountId: bank.id, amount: 2_000 },
    });
    // Skip most of the 30 s, then let the worker reach the rest on its own.
    await advanceClock(sandbox.client, 25);
    expect((await transactionOf(sandbox.client, data!.id)).status).toBe("PENDING");
    await waitFor(async () => (await transactionOf(sandbox.client, data!.id)).status === "FAILED");
    expect(await balanceOf(sandbox.client, account.id)).toBe(2_000);
  });

  it("refuses different currencies with 400 INVALID_CURRENCY", async () => {
    const account = await createAccount(sandbox.client, customerId, "EUR", 1_000);
    const bank = await createBankAccount(sandbox.client, customerId, "789", "USD");
    for (const path of ["/transfer-in", "/transfer-out"] as const) {
      const res = await sandbox.client.POST(path, {
        body: { internalAccountId: account.id, externalAccountId: bank.id, amount: 100 },
      });
      expect(res.response.status).toBe(400);
      expect(res.error).toMatchObject({ code: "INVALID_CURRENCY" });
    }
    expect(await balanceOf(sandbox.client, account.id)).toBe(1_000);
  });

  it("refuses a transfer out beyond the balance with 400 INSUFFICIENT_BALANCE and records nothing", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 999);
    const bank = await createBankAccount(sandbox.client, customerId, "789");
    const res = await sandbox.client.POST("/transfer-out", {
      body: { internalAccountId: account.id, externalAccountId: bank.id, amount: 1_000 },
    });
    expect(res.response.status).toBe(400);
    expect(res.error).toMatchObject({ code: "INSUFFICIENT_BALANCE" });
    const list = await sandbox.client.GET("/transactions", {
      params: { query: { internalAccountId: account.id, type: "TRANSFER_OUT" } },
    });
    expect(list.data?.data).toEqual([]);
    expect(await balanceOf(sandbox.client, account.id)).toBe(999);
  });

  it("never overdraws an account under concurrent transfers out", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 1_000);
    const bank = await createBankAccount(sandbox.client, customerId, "789");
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        sandbox.client.POST("/transfer-out", {
          body: { internalAccountId: account.id, externalAccountId: bank.id, amount: 300 },
        }),
      ),
    );
    const statuses = results.map((r) => r.response.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(statuses.filter((s) => s === 400)).toHaveLength(9);
    expect(results.filter((r) => r.response.status === 400).map((r) => r.error?.code)).toEqual(
      Array(9).fill("INSUFFICIENT_BALANCE"),
    );
    expect(await balanceOf(sandbox.client, account.id)).toBe(100);
  });

  it("replays a transfer for the same Idempotency-Key and moves the money once", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 5_000);
    const bank = await createBankAccount(sandbox.client, customerId, "789");
    const body = { internalAccountId: account.id, externalAccountId: bank.id, amount: 1_200 };
    const headers = { "Idempotency-Key": `transfer-${account.id}` };
    const first = await sandbox.client.POST("/transfer-out", { body, params: { header: headers } });
    const second = await sandbox.client.POST("/transfer-out", {
      body,
      params: { header: headers },
    });
    expect(first.response.status).toBe(201);
    expect(second.response.status).toBe(201);
    expect(second.data).toEqual(first.data);
    expect(await balanceOf(sandbox.client, account.id)).toBe(3_800);

    const other = await sandbox.client.POST("/transfer-out", {
      body: { ...body, amount: 1_300 },
      params: { header: headers },
    });
    expect(other.response.status).toBe(400);
    expect(other.error).toMatchObject({ code: "IDEMPOTENCY_KEY_REUSED" });
    // The same key on the other operation is other parameters too.
    const inbound = await sandbox.client.POST("/transfer-in", {
      body,
      params: { header: headers },
    });
    expect(inbound.error).toMatchObject({ code: "IDEMPOTENCY_KEY_REUSED" });
    expect(await balanceOf(sandbox.client, account.id)).toBe(3_800);
  });

  it("lists transactions with filters and a cursor, and reads one", async () => {
    const other = await createCustomer(sandbox.client, { lastName: "Hopper" });
    const account = await createAccount(sandbox.client, other.id, "USD", 10_000);
    const bank = await createBankAccount(sandbox.client, other.id, "789");
    const made: string[] = [];
    for (const amount of [100, 200, 300]) {
      const { data } = await sandbox.client.POST("/transfer-out", {
        body: { internalAccountId: account.id, externalAccountId: bank.id, amount },
      });
      made.push(data!.id);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const { data } = await sandbox.client.GET("/transactions", {
        params: {
          query: {
            customerId: other.id,
            type: "TRANSFER_OUT",
            limit: 2,
            ...(cursor ? { cursor } : {}),
          },
        },
      });
      seen.push(...data!.data.map((t) => t.id));
      if (!data!.hasMore) break;
      cursor = data!.nextCursor;
    }
    expect(seen.sort()).toEqual([...made].sort());
    // The sandbox FUNDING top-up is a transaction of its own.
    const funding = await sandbox.client.GET("/transactions", {
      params: { query: { internalAccountId: account.id, type: "FUNDING" } },
    });
    expect(funding.data?.data).toHaveLength(1);
    expect(funding.data?.data[0]).toMatchObject({ amount: 10_000, status: "COMPLETED" });
    const completed = await sandbox.client.GET("/transactions", {
      params: { query: { customerId: other.id, status: "FAILED" } },
    });
    expect(completed.data?.data).toEqual([]);
    const got = await transactionOf(sandbox.client, made[0]!);
    expect(got).toMatchObject({ id: made[0], amount: 100 });

    const foreign = await sandbox.otherPlatformClient();
    const hidden = await foreign.GET("/transactions/{transactionId}", {
      params: { path: { transactionId: made[0]! } },
    });
    expect(hidden.response.status).toBe(404);
    expect(hidden.error).toMatchObject({ code: "TRANSACTION_NOT_FOUND" });
    const foreignList = await foreign.GET("/transactions", {});
    expect(foreignList.data?.data).toEqual([]);
  });
});
