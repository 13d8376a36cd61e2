import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { QUOTE_DESTINATION_TABLE } from "@payments-sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  advanceClock,
  balanceOf,
  createAccount,
  createCustomer,
  eventsAbout,
  transactionOf,
} from "./money-helpers.js";
import { FUNDED, createIban, execute, quoteOf, quoteToIban } from "./support/quotes.js";

// Paying a quote: each outcome of the quote destination table, and executing
// once, whatever the retries and races.

describe.each(databases)("quotes on %s", (kind) => {
  let sandbox: TestSandbox;
  let customerId: string;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  // Accounts are opened with their customer, one per currency: each test
  // gets its own customer, so its accounts start empty.
  beforeEach(async () => {
    customerId = (await createCustomer(sandbox.client)).id;
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  /** A funded USD account and a quote from it to an IBAN with `suffix`. */
  async function quoteWithSuffix(suffix: string) {
    const account = await createAccount(sandbox.client, customerId, "USD", FUNDED);
    const iban = await createIban(sandbox.client, customerId, suffix);
    const quote = await quoteToIban(sandbox.client, account.id, iban.id);
    return { account, iban, quote };
  }

  it("covers every row of the quote destination table in this file", () => {
    expect(QUOTE_DESTINATION_TABLE.rows.map((r) => r.match)).toEqual([
      "002",
      "003",
      "004",
      "005",
      "006",
      "007",
    ]);
  });

  it("pays a quote to any other suffix: COMPLETED, the source debited once", async () => {
    const { account, iban, quote } = await quoteWithSuffix("000");
    const { data, response } = await execute(sandbox.client, quote.id);
    expect(response.status).toBe(200);
    expect(data).toMatchObject({ id: quote.id, status: "COMPLETED" });
    const transaction = await transactionOf(sandbox.client, data!.transactionId!);
    expect(transaction).toMatchObject({
      type: "OUTGOING",
      status: "COMPLETED",
      quoteId: quote.id,
      source: { sourceType: "ACCOUNT", accountId: account.id },
      destination: { destinationType: "ACCOUNT", accountId: iban.id },
      sentAmount: { amount: quote.totalSendingAmount, currency: { code: "USD" } },
      receivedAmount: { amount: quote.totalReceivingAmount, currency: { code: "EUR" } },
      exchangeRate: quote.exchangeRate,
      direction: "DEBIT",
    });
    const paymentEvents = await eventsAbout(sandbox.server.data, transaction.id);
    expect(paymentEvents.map((e) => e.type)).toEqual([
      "OUTGOING_PAYMENT.PENDING",
      "OUTGOING_PAYMENT.COMPLETED",
    ]);
    expect(await balanceOf(sandbox.client, account.id)).toBe(FUNDED - quote.totalSendingAmount);
    const again = await execute(sandbox.client, quote.id);
    expect(again.error).toMatchObject({ status: 409, code: "INVALID_STATE_TRANSITION" });
    // The file's first test also compiles each operation's checks on first use.
  }, 90_000);

  // Suffix, failure reason (none: the refund's reason says it), refund status and reason.
  const failsAtOnce = [
    ["002", "QUOTE_EXECUTION_FAILED", "COMPLETED", "TRANSACTION_FAILED"],
    ["004", "COUNTERPARTY_POST_TX_FAILED", "COMPLETED", "TRANSACTION_FAILED"],
    ["006", undefined, "COMPLETED", "USER_CANCELLATION"],
    ["007", "COUNTERPARTY_POST_TX_FAILED", "FAILED", "TRANSACTION_FAILED"],
  ] as const;
  for (const [suffix, reason, refund, refundReason] of failsAtOnce) {
    it(`fails a quote to suffix ${suffix} (${reason ?? refundReason}); refund ${refund}`, async () => {
      const { account, quote } = await quoteWithSuffix(suffix);
      const { data } = await execute(sandbox.client, quote.id);
      expect(data?.status).toBe("FAILED");
      const transaction = await transactionOf(sandbox.client, data!.transactionId!);
      expect(transaction).toMatchObject({
        status: "FAILED",
        refund: { status: refund, reason: refundReason },
      });
      expect("failureReason" in transaction ? transaction.failureReason : undefined).toBe(reason);
      expect(await balanceOf(sandbox.client, account.id)).toBe(
        refund === "COMPLETED" ? FUNDED : FUNDED - quote.totalSendingAmount,
      );
      const events = await eventsAbout(sandbox.server.data, data!.transactionId!);
      expect(events.map((e) => e.type)).toEqual([
        "OUTGOING_PAYMENT.PENDING",
        "OUTGOING_PAYMENT.FAILED",
        `OUTGOING_PAYMENT.REFUND_${refund}`,
      ]);
    });
  }

  it("completes a quote to suffix 003 after about 6 minutes", async () => {
    const { account, quote } = await quoteWithSuffix("003");
    const { data } = await execute(sandbox.client, quote.id);
    expect(data?.status).toBe("PROCESSING");
    expect(await balanceOf(sandbox.client, account.id)).toBe(FUNDED - quote.totalSendingAmount);
    await advanceClock(sandbox.client, 300);
    expect((await quoteOf(sandbox.client, quote.id)).status).toBe("PROCESSING");
    await advanceClock(sandbox.client, 70);
    expect((await quoteOf(sandbox.client, quote.id)).status).toBe("COMPLETED");
    const transaction = await transactionOf(sandbox.client, data!.transactionId!);
    expect(transaction.status).toBe("COMPLETED");
    expect(transaction.settledAt).toBeDefined();
    const events = await eventsAbout(sandbox.server.data, transaction.id);
    expect(events.map((e) => e.type)).toEqual([
      "OUTGOING_PAYMENT.PENDING",
      "OUTGOING_PAYMENT.PROCESSING",
      "OUTGOING_PAYMENT.COMPLETED",
    ]);
  });

  it("completes a quote to suffix 005, then fails it when the bank returns the payment", async () => {
    const { account, quote } = await quoteWithSuffix("005");
    const { data } = await execute(sandbox.client, quote.id);
    expect(data?.status).toBe("COMPLETED");
    expect(await balanceOf(sandbox.client, account.id)).toBe(FUNDED - quote.totalSendingAmount);
    await advanceClock(sandbox.client, 65);
    expect((await quoteOf(sandbox.client, quote.id)).status).toBe("FAILED");
    const transaction = await transactionOf(sandbox.client, data!.transactionId!);
    expect(transaction).toMatchObject({
      status: "FAILED",
      failureReason: "PAYOUT_RETURNED",
      refund: { status: "COMPLETED", reason: "TRANSACTION_FAILED" },
    });
    expect(transaction.settledAt).toBeDefined();
    expect(await balanceOf(sandbox.client, account.id)).toBe(FUNDED);
    const events = await eventsAbout(sandbox.server.data, data!.transactionId!);
    expect(events.map((e) => e.type)).toEqual([
      "OUTGOING_PAYMENT.PENDING",
      "OUTGOING_PAYMENT.COMPLETED",
      "OUTGOING_PAYMENT.FAILED",
      "OUTGOING_PAYMENT.REFUND_COMPLETED",
    ]);
  });

  it("refuses to execute beyond the balance with 400 (reason Insufficient balance); the quote stays PENDING", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 5_000);
    const iban = await createIban(sandbox.client, customerId, "000");
    const quote = await quoteToIban(sandbox.client, account.id, iban.id, 6_000);
    const res = await execute(sandbox.client, quote.id);
    expect(res.error).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
      reason: "Insufficient balance",
    });
    expect((await quoteOf(sandbox.client, quote.id)).status).toBe("PENDING");
    expect(await balanceOf(sandbox.client, account.id)).toBe(5_000);
  });

  it("expires a quote that is not executed in time", async () => {
    const { quote } = await quoteWithSuffix("000");
    await advanceClock(sandbox.client, 301);
    expect((await quoteOf(sandbox.client, quote.id)).status).toBe("EXPIRED");
    const res = await execute(sandbox.client, quote.id);
    expect(res.error).toMatchObject({ status: 409, code: "INVALID_STATE_TRANSITION" });
    // The quote's transaction expires with it.
    const events = await eventsAbout(sandbox.server.data, quote.transactionId);
    expect(events.map((e) => e.type)).toEqual([
      "OUTGOING_PAYMENT.PENDING",
      "OUTGOING_PAYMENT.EXPIRED",
    ]);
    expect((await transactionOf(sandbox.client, quote.transactionId)).status).toBe("EXPIRED");
  });

  it("executes once for one Idempotency-Key and replays the first response", async () => {
    const { account, quote } = await quoteWithSuffix("000");
    const key = randomUUID();
    const first = await execute(sandbox.client, quote.id, key);
    const second = await execute(sandbox.client, quote.id, key);
    expect(first.response.status).toBe(200);
    expect(second.response.status).toBe(200);
    expect(second.data).toEqual(first.data);
    expect(await balanceOf(sandbox.client, account.id)).toBe(FUNDED - quote.totalSendingAmount);
    const payments = await sandbox.client.GET("/transactions", {
      params: { query: { senderAccountIdentifier: account.id, type: "OUTGOING" } },
    });
    expect(payments.data?.data).toHaveLength(1);

    // The same key for another quote is a different request.
    const { quote: otherQuote } = await quoteWithSuffix("000");
    const reused = await execute(sandbox.client, otherQuote.id, key);
    expect(reused.error).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
      reason: "Idempotency-Key reused with different parameters",
    });
    expect((await quoteOf(sandbox.client, otherQuote.id)).status).toBe("PENDING");

    const tooLong = await execute(sandbox.client, otherQuote.id, "k".repeat(256));
    expect(tooLong.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
  });

  it("executes a quote once when two executions race without a key", async () => {
    const { account, quote } = await quoteWithSuffix("000");
    const results = await Promise.all([
      execute(sandbox.client, quote.id),
      execute(sandbox.client, quote.id),
      execute(sandbox.client, quote.id),
    ]);
    const statuses = results.map((r) => r.response.status).sort();
    expect(statuses).toEqual([200, 409, 409]);
    for (const lost of results.filter((r) => r.response.status === 409)) {
      expect(lost.error).toMatchObject({ code: "INVALID_STATE_TRANSITION" });
    }
    expect(await balanceOf(sandbox.client, account.id)).toBe(FUNDED - quote.totalSendingAmount);
  });

  it("pays a real-time-funded quote through POST /sandbox/send", async () => {
    const iban = await createIban(sandbox.client, customerId, "000");
    const { data: quote } = await sandbox.client.POST("/quotes", {
      body: {
        source: { sourceType: "REALTIME_FUNDING", currency: "USD" },
        destination: { destinationType: "ACCOUNT", accountId: iban.id },
        lockedCurrencySide: "SENDING",
        lockedCurrencyAmount: 5_100,
      },
    });
    expect(quote?.paymentInstructions).toEqual([
      expect.objectContaining({
        accountOrWalletInfo: expect.objectContaining({
          accountType: "USD_ACCOUNT",
          routingNumber: "110000000",
          reference: expect.stringMatching(/^QT-/),
        }),
      }),
    ]);
    expect(quote?.paymentInstructions?.[0]?.instructionsNotes).toContain("51.00 USD");
    const executed = await execute(sandbox.client, quote!.id);
    expect(executed.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    const wrongCurrency = await sandbox.client.POST("/sandbox/send", {
      body: { quoteId: quote!.id, currencyCode: "EUR" },
    });
    expect(wrongCurrency.error).toMatchObject({ status: 400, code: "INVALID_CURRENCY" });
    const wrongAmount = await sandbox.client.POST("/sandbox/send", {
      body: { quoteId: quote!.id, currencyCode: "USD", currencyAmount: 5_000 },
    });
    expect(wrongAmount.error).toMatchObject({ status: 400, code: "INVALID_AMOUNT" });
    const sent = await sandbox.client.POST("/sandbox/send", {
      body: { quoteId: quote!.id, currencyCode: "USD", currencyAmount: 5_100 },
    });
    expect(sent.data).toMatchObject({
      type: "OUTGOING",
      status: "COMPLETED",
      quoteId: quote!.id,
      source: { sourceType: "REALTIME_FUNDING", currency: "USD" },
    });
    expect((await quoteOf(sandbox.client, quote!.id)).status).toBe("COMPLETED");
    const twice = await sandbox.client.POST("/sandbox/send", {
      body: { quoteId: quote!.id, currencyCode: "USD" },
    });
    expect(twice.error).toMatchObject({ status: 409, code: "INVALID_STATE_TRANSITION" });

    const { quote: internal } = await quoteWithSuffix("000");
    const notRealtime = await sandbox.client.POST("/sandbox/send", {
      body: { quoteId: internal.id, currencyCode: "USD" },
    });
    expect(notRealtime.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
  });

  it("hides another platform's quotes", async () => {
    const { quote } = await quoteWithSuffix("000");
    const other = await sandbox.otherPlatformClient();
    const got = await other.GET("/quotes/{quoteId}", { params: { path: { quoteId: quote.id } } });
    expect(got.error).toMatchObject({ status: 404, code: "QUOTE_NOT_FOUND" });
    const run = await execute(other, quote.id);
    expect(run.error).toMatchObject({ status: 404, code: "QUOTE_NOT_FOUND" });
  });
});

describe.each(databases)("quote execution at the same moment on %s", (kind) => {
  let sandbox: TestSandbox;
  let release: () => void = () => undefined;
  const held = "held-key";
  afterAll(async () => {
    release();
    await sandbox?.stop();
  });

  it("gives one execution and one 409 CONFLICT (reason: the key's request is in progress)", async () => {
    const gate = new Promise<void>((resolve) => (release = resolve));
    // Holds the request that claims the key until the other one has answered,
    // so "at the same moment" is certain rather than likely.
    sandbox = await startSandbox(kind, {
      afterIdempotencyClaim: async (key) => {
        if (key === held) await gate;
      },
    });
    const customer = await createCustomer(sandbox.client);
    const account = await createAccount(sandbox.client, customer.id, "USD", FUNDED);
    const iban = await createIban(sandbox.client, customer.id, "000");
    const quote = await quoteToIban(sandbox.client, account.id, iban.id);

    const requests = [
      execute(sandbox.client, quote.id, held),
      execute(sandbox.client, quote.id, held),
    ];
    const first = await Promise.race(requests.map((p, index) => p.then((r) => ({ index, r }))));
    expect(first.r.response.status).toBe(409);
    expect(first.r.error).toMatchObject({
      code: "CONFLICT",
      reason: "Idempotency-Key request still in progress",
    });
    release();
    const other = await requests[1 - first.index]!;
    expect(other.response.status).toBe(200);
    expect(other.data?.status).toBe("COMPLETED");
    // Afterwards the key replays the one execution.
    const replay = await execute(sandbox.client, quote.id, held);
    expect(replay.data).toEqual(other.data);
    expect(await balanceOf(sandbox.client, account.id)).toBe(FUNDED - quote.totalSendingAmount);
  });
});
