import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { TRANSFER_TABLE } from "@payments-sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  advanceClock,
  balanceOf,
  createAccount,
  createBankAccount,
  createCustomer,
  eventsAbout,
  transactionOf,
  waitFor,
} from "./money-helpers.js";
import { pull, push } from "./support/transfers.js";

// Transfers in and out: each outcome of the transfer table, cancelling,
// deciding, and the guards on balances, currencies and retries. Listing the
// transactions they make is in transfers-listing.test.ts.

// Transfer suffix table rows (packages/sandbox-rules), each for both directions:
// the reason a transfer in reports, and the reason a transfer out reports.
const FAIL_AT_ONCE = [
  ["002", "COLLECTION_FAILED", "LIMIT_EXCEEDED"],
  ["003", "COLLECTION_FAILED", "ACCOUNT_INVALID"],
  ["004", "COLLECTION_FAILED", "ACCOUNT_CANNOT_RECEIVE"],
] as const;

const USD = { code: "USD", name: "US Dollar", symbol: "$", decimals: 2 };

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
      body: pull(account.id, bank.id, 5_000),
    });
    expect(response.status).toBe(201);
    const customer = await sandbox.client.GET("/customers/{customerId}", {
      params: { path: { customerId } },
    });
    expect(data).toMatchObject({
      type: "INCOMING",
      status: "COMPLETED",
      direction: "CREDIT",
      source: { sourceType: "ACCOUNT", accountId: bank.id, currency: "USD" },
      destination: { destinationType: "ACCOUNT", accountId: account.id, currency: "USD" },
      sentAmount: { amount: 5_000, currency: USD },
      receivedAmount: { amount: 5_000, currency: USD },
      customerId,
      platformCustomerId: customer.data!.platformCustomerId,
    });
    expect(data && "settledAt" in data && data.settledAt).toBeTruthy();
    expect(await balanceOf(sandbox.client, account.id)).toBe(5_000);
    const events = await eventsAbout(sandbox.server.data, data!.id);
    expect(events.map((e) => [e.type, e.data.status])).toEqual([
      ["INCOMING_PAYMENT.COMPLETED", "COMPLETED"],
    ]);
    expect(events[0]!.data).toEqual(data);
  });

  it("transfers out with any other suffix: completes and debits the account", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 10_000);
    const bank = await createBankAccount(sandbox.client, customerId, "000");
    const { data, response } = await sandbox.client.POST("/transfer-out", {
      body: { ...push(account.id, bank.id, 2_500), remittanceInformation: "Invoice 118" },
    });
    expect(response.status).toBe(201);
    expect(data).toMatchObject({
      type: "OUTGOING",
      status: "COMPLETED",
      direction: "DEBIT",
      source: { sourceType: "ACCOUNT", accountId: account.id },
      destination: { destinationType: "ACCOUNT", accountId: bank.id },
      sentAmount: { amount: 2_500, currency: USD },
      reconciliationInstructions: { reference: "Invoice 118" },
    });
    expect(await balanceOf(sandbox.client, account.id)).toBe(7_500);
    const events = await eventsAbout(sandbox.server.data, data!.id);
    expect(events.map((e) => e.type)).toEqual(["OUTGOING_PAYMENT.COMPLETED"]);
    const byReference = await sandbox.client.GET("/transactions", {
      params: { query: { reference: "Invoice 118", customerId } },
    });
    expect(byReference.data?.data.map((t) => t.id)).toEqual([data!.id]);
  });

  it("transfers out the whole balance when the amount is left out; a pull needs an amount", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 6_400);
    const bank = await createBankAccount(sandbox.client, customerId, "000");
    const { data } = await sandbox.client.POST("/transfer-out", {
      body: push(account.id, bank.id),
    });
    expect(data).toMatchObject({ status: "COMPLETED", sentAmount: { amount: 6_400 } });
    expect(await balanceOf(sandbox.client, account.id)).toBe(0);
    const empty = await sandbox.client.POST("/transfer-out", { body: push(account.id, bank.id) });
    expect(empty.response.status).toBe(400);
    expect(empty.error).toMatchObject({ code: "INVALID_INPUT", reason: "Insufficient balance" });
    const noAmount = await sandbox.client.POST("/transfer-in", { body: pull(account.id, bank.id) });
    expect(noAmount.response.status).toBe(400);
    expect(noAmount.error).toMatchObject({ code: "INVALID_INPUT" });
    expect(noAmount.error?.message).toContain("amount");
  });

  for (const [suffix, inReason, outReason] of FAIL_AT_ONCE) {
    it(`fails a transfer in with suffix ${suffix} at once (${inReason}); nothing is credited`, async () => {
      const account = await createAccount(sandbox.client, customerId, "USD");
      const bank = await createBankAccount(sandbox.client, customerId, suffix);
      const { data } = await sandbox.client.POST("/transfer-in", {
        body: pull(account.id, bank.id, 1_000),
      });
      expect(data).toMatchObject({ status: "FAILED", failureReason: inReason });
      expect(data).not.toHaveProperty("refund");
      expect(await balanceOf(sandbox.client, account.id)).toBe(0);
      const events = await eventsAbout(sandbox.server.data, data!.id);
      expect(events.map((e) => e.type)).toEqual(["INCOMING_PAYMENT.FAILED"]);
    });

    it(`fails a transfer out with suffix ${suffix} at once (${outReason}); the money stays`, async () => {
      const account = await createAccount(sandbox.client, customerId, "USD", 3_000);
      const bank = await createBankAccount(sandbox.client, customerId, suffix);
      const { data } = await sandbox.client.POST("/transfer-out", {
        body: push(account.id, bank.id, 1_000),
      });
      expect(data).toMatchObject({
        status: "FAILED",
        failureReason: outReason,
        refund: { status: "COMPLETED", reason: "TRANSACTION_FAILED" },
      });
      expect(await balanceOf(sandbox.client, account.id)).toBe(3_000);
      const events = await eventsAbout(sandbox.server.data, data!.id);
      expect(events.map((e) => e.type)).toEqual([
        "OUTGOING_PAYMENT.FAILED",
        "OUTGOING_PAYMENT.REFUND_COMPLETED",
      ]);
    });
  }

  it("keeps a transfer in with suffix 005 pending about 30 s, then fails it", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD");
    const bank = await createBankAccount(sandbox.client, customerId, "005");
    const { data } = await sandbox.client.POST("/transfer-in", {
      body: pull(account.id, bank.id, 1_000),
    });
    expect(data?.status).toBe("PENDING");
    await advanceClock(sandbox.client, 20);
    expect((await transactionOf(sandbox.client, data!.id)).status).toBe("PENDING");
    await advanceClock(sandbox.client, 15);
    const failed = await transactionOf(sandbox.client, data!.id);
    expect(failed).toMatchObject({ status: "FAILED", failureReason: "COLLECTION_FAILED" });
    expect(await balanceOf(sandbox.client, account.id)).toBe(0);
    const events = await eventsAbout(sandbox.server.data, data!.id);
    expect(events.map((e) => e.type)).toEqual([
      "INCOMING_PAYMENT.PENDING",
      "INCOMING_PAYMENT.FAILED",
    ]);
  });

  it("holds a transfer out with suffix 005 for about 30 s, then fails it and credits the money back", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 4_000);
    const bank = await createBankAccount(sandbox.client, customerId, "005");
    const { data } = await sandbox.client.POST("/transfer-out", {
      body: push(account.id, bank.id, 1_500),
    });
    expect(data?.status).toBe("PENDING");
    expect(await balanceOf(sandbox.client, account.id)).toBe(2_500);
    await advanceClock(sandbox.client, 35);
    expect(await transactionOf(sandbox.client, data!.id)).toMatchObject({
      status: "FAILED",
      failureReason: "COUNTERPARTY_POST_TX_FAILED",
      refund: { status: "COMPLETED", reason: "TRANSACTION_FAILED" },
    });
    expect(await balanceOf(sandbox.client, account.id)).toBe(4_000);
  });

  it("cancels a pending transfer out: it fails and the money comes back, once", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 4_000);
    const bank = await createBankAccount(sandbox.client, customerId, "005");
    const { data } = await sandbox.client.POST("/transfer-out", {
      body: push(account.id, bank.id, 1_500),
    });
    const cancelled = await sandbox.client.POST("/transactions/{transactionId}/cancel", {
      params: { path: { transactionId: data!.id } },
      body: { reason: "sent to the wrong account" },
    });
    expect(cancelled.response.status).toBe(200);
    expect(cancelled.data).toMatchObject({
      status: "FAILED",
      refund: { status: "COMPLETED", reason: "USER_CANCELLATION" },
    });
    expect(await balanceOf(sandbox.client, account.id)).toBe(4_000);
    // The settling job finds it cancelled and moves nothing.
    await advanceClock(sandbox.client, 35);
    expect(await balanceOf(sandbox.client, account.id)).toBe(4_000);
    const again = await sandbox.client.POST("/transactions/{transactionId}/cancel", {
      params: { path: { transactionId: data!.id } },
    });
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ code: "TRANSACTION_NOT_CANCELLABLE" });
    const events = await eventsAbout(sandbox.server.data, data!.id);
    expect(events.map((e) => e.type)).toEqual([
      "OUTGOING_PAYMENT.PENDING",
      "OUTGOING_PAYMENT.FAILED",
      "OUTGOING_PAYMENT.REFUND_COMPLETED",
    ]);
  });

  it("cancels a pending transfer in before anything is credited; a settled one is not cancellable", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD");
    const slow = await createBankAccount(sandbox.client, customerId, "005");
    const { data } = await sandbox.client.POST("/transfer-in", {
      body: pull(account.id, slow.id, 700),
    });
    const cancelled = await sandbox.client.POST("/transactions/{transactionId}/cancel", {
      params: { path: { transactionId: data!.id } },
    });
    expect(cancelled.data).toMatchObject({ status: "FAILED" });
    expect(cancelled.data).not.toHaveProperty("refund");
    await advanceClock(sandbox.client, 35);
    expect(await balanceOf(sandbox.client, account.id)).toBe(0);

    const fast = await createBankAccount(sandbox.client, customerId, "789");
    const settled = await sandbox.client.POST("/transfer-in", {
      body: pull(account.id, fast.id, 700),
    });
    const late = await sandbox.client.POST("/transactions/{transactionId}/cancel", {
      params: { path: { transactionId: settled.data!.id } },
    });
    expect(late.response.status).toBe(409);
    expect(late.error).toMatchObject({ code: "TRANSACTION_NOT_CANCELLABLE" });
    expect(await balanceOf(sandbox.client, account.id)).toBe(700);
  });

  it("records the receipt delivery time, now or as given, and replaces it on a second call", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 900);
    const bank = await createBankAccount(sandbox.client, customerId, "789");
    const { data } = await sandbox.client.POST("/transfer-out", {
      body: push(account.id, bank.id, 100),
    });
    const path = { params: { path: { transactionId: data!.id } } };
    const first = await sandbox.client.POST("/transactions/{transactionId}/confirm", path);
    expect(first.response.status).toBe(200);
    expect(first.data).toHaveProperty("receiptDeliveryConfirmedAt");
    const given = "2025-08-15T14:31:00.000Z";
    const second = await sandbox.client.POST("/transactions/{transactionId}/confirm", {
      ...path,
      body: { receiptDeliveryConfirmedAt: given },
    });
    expect(second.data).toMatchObject({ receiptDeliveryConfirmedAt: given });
    expect((await transactionOf(sandbox.client, data!.id)).receiptDeliveryConfirmedAt).toBe(given);
    const missing = await sandbox.client.POST("/transactions/{transactionId}/confirm", {
      params: { path: { transactionId: "Transaction:00000000-0000-4000-8000-000000000000" } },
    });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toMatchObject({ code: "TRANSACTION_NOT_FOUND" });
  });

  it("approves or rejects only what waits for the platform: 409 otherwise", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 900);
    const bank = await createBankAccount(sandbox.client, customerId, "789");
    const { data } = await sandbox.client.POST("/transfer-out", {
      body: push(account.id, bank.id, 100),
    });
    for (const path of [
      "/transactions/{transactionId}/approve",
      "/transactions/{transactionId}/reject",
    ] as const) {
      const res = await sandbox.client.POST(path, {
        params: { path: { transactionId: data!.id } },
      });
      expect(res.response.status).toBe(409);
      expect(res.error).toMatchObject({ code: "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL" });
    }
    expect(await balanceOf(sandbox.client, account.id)).toBe(800);
  });

  it("fails a pending 005 transfer out in real time, with no call to the clock", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 2_000);
    const bank = await createBankAccount(sandbox.client, customerId, "005");
    const { data } = await sandbox.client.POST("/transfer-out", {
      body: push(account.id, bank.id, 2_000),
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
    for (const res of [
      await sandbox.client.POST("/transfer-in", { body: pull(account.id, bank.id, 100) }),
      await sandbox.client.POST("/transfer-out", { body: push(account.id, bank.id, 100) }),
    ]) {
      expect(res.response.status).toBe(400);
      expect(res.error).toMatchObject({ code: "INVALID_CURRENCY" });
    }
    expect(await balanceOf(sandbox.client, account.id)).toBe(1_000);
  });

  it("refuses a transfer out beyond the balance with 400 (reason Insufficient balance) and records nothing", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 999);
    const bank = await createBankAccount(sandbox.client, customerId, "789");
    const res = await sandbox.client.POST("/transfer-out", {
      body: push(account.id, bank.id, 1_000),
    });
    expect(res.response.status).toBe(400);
    expect(res.error).toMatchObject({ code: "INVALID_INPUT", reason: "Insufficient balance" });
    const list = await sandbox.client.GET("/transactions", {
      params: { query: { accountIdentifier: account.id, type: "OUTGOING" } },
    });
    expect(list.data?.data).toEqual([]);
    expect(await balanceOf(sandbox.client, account.id)).toBe(999);
  });

  it("never overdraws an account under concurrent transfers out", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 1_000);
    const bank = await createBankAccount(sandbox.client, customerId, "789");
    const results = await Promise.all(
      Array.from({ length: 12 }, () =>
        sandbox.client.POST("/transfer-out", { body: push(account.id, bank.id, 300) }),
      ),
    );
    const statuses = results.map((r) => r.response.status).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(statuses.filter((s) => s === 400)).toHaveLength(9);
    expect(results.filter((r) => r.response.status === 400).map((r) => r.error?.reason)).toEqual(
      Array(9).fill("Insufficient balance"),
    );
    expect(await balanceOf(sandbox.client, account.id)).toBe(100);
  });

  it("replays a transfer for the same Idempotency-Key and moves the money once", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 5_000);
    const bank = await createBankAccount(sandbox.client, customerId, "789");
    const body = push(account.id, bank.id, 1_200);
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
    expect(other.error).toMatchObject({
      code: "INVALID_INPUT",
      reason: "Idempotency-Key reused with different parameters",
    });
    // The same key on the other operation is other parameters too.
    const inbound = await sandbox.client.POST("/transfer-in", {
      body: pull(account.id, bank.id, 1_200),
      params: { header: headers },
    });
    expect(inbound.error).toMatchObject({
      code: "INVALID_INPUT",
      reason: "Idempotency-Key reused with different parameters",
    });
    expect(await balanceOf(sandbox.client, account.id)).toBe(3_800);
  });
});
