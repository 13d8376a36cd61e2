import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { SandboxClient, Schemas } from "@payments-sandbox/client";
import {
  QUOTE_DESTINATION_TABLE,
  SANDBOX_SCA_CODE,
  SCA_SESSION_SECONDS,
} from "@payments-sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  advanceClock,
  balanceOf,
  createAccount,
  createCustomer,
  eventsAbout,
  executeQuote,
  createBankAccount,
  logInWithSca,
  transactionOf,
} from "./money-helpers.js";

type Quote = Schemas["Quote"];

/** A EUR IBAN whose last 3 digits are `suffix`. */
function createIban(client: SandboxClient, customerId: string, suffix: string) {
  return createBankAccount(client, customerId, suffix, "EUR");
}

async function quoteToIban(
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

function execute(client: SandboxClient, quoteId: string, idempotencyKey?: string) {
  return executeQuote(client, quoteId, idempotencyKey ? { "Idempotency-Key": idempotencyKey } : {});
}

async function quoteOf(client: SandboxClient, quoteId: string): Promise<Quote> {
  const { data } = await client.GET("/quotes/{quoteId}", { params: { path: { quoteId } } });
  if (!data) throw new Error(`no quote ${quoteId}`);
  return data;
}

const FUNDED = 20_000;

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

  it("lists exchange rates per destination rail, pricing sendingAmount after the fee", async () => {
    const { data } = await sandbox.client.GET("/exchange-rates", {
      params: { query: { sourceCurrency: "USD" } },
    });
    expect(data!.data.length).toBeGreaterThan(1);
    expect(data!.data.every((r) => r.sourceCurrency.code === "USD")).toBe(true);
    const mxn = data!.data.filter((r) => r.destinationCurrency.code === "MXN");
    // MXN is paid out on SPEI only; USD on four rails, at one rate.
    expect(mxn.map((r) => r.destinationPaymentRail)).toEqual(["SPEI"]);
    const [spei] = mxn;
    expect(spei).toMatchObject({
      sourceCurrency: { code: "USD", decimals: 2 },
      destinationCurrency: { code: "MXN", name: "Mexican Peso" },
      sendingAmount: 10_000,
      minSendingAmount: 1,
      fees: { fixed: 100, total: 100 },
    });
    expect(spei!.exchangeRate).toBeGreaterThan(10);
    // What 10000 buys: the fee comes off first, the rest converts, rounded down.
    expect(spei!.receivingAmount).toBe(Math.floor((10_000 - 100) * spei!.exchangeRate));
    const window = Date.now() - new Date(spei!.updatedAt).getTime();
    expect(window).toBeGreaterThanOrEqual(0);
    expect(window).toBeLessThan(300_000);
    const dollars = data!.data.filter((r) => r.destinationCurrency.code === "USD");
    expect(dollars.map((r) => r.destinationPaymentRail).sort()).toEqual([
      "ACH",
      "FEDNOW",
      "RTP",
      "WIRE",
    ]);

    const pair = await sandbox.client.GET("/exchange-rates", {
      params: {
        query: {
          sourceCurrency: "EUR",
          destinationCurrency: ["MXN", "GBP"],
          sendingAmount: 50_000,
        },
      },
    });
    expect(pair.data?.data.map((r) => r.destinationCurrency.code).sort()).toEqual(["GBP", "MXN"]);
    expect(pair.data?.data.every((r) => r.sendingAmount === 50_000)).toBe(true);
  });

  it("reads an array query parameter repeated or comma-joined, as production's SDK sends it", async () => {
    const codes = (rates: { destinationCurrency: { code?: string } }[] | undefined) =>
      [...new Set(rates?.map((r) => r.destinationCurrency.code))].sort();
    // The typed client, set to join arrays with commas (`?destinationCurrency=MXN,GBP`).
    const joined = await sandbox.client.GET("/exchange-rates", {
      params: { query: { sourceCurrency: "EUR", destinationCurrency: ["MXN", "GBP"] } },
      querySerializer: { array: { style: "form", explode: false } },
    });
    expect(codes(joined.data?.data)).toEqual(["GBP", "MXN"]);
    for (const query of [
      "destinationCurrency=MXN%2CGBP",
      "destinationCurrency=MXN,GBP",
      "destinationCurrency=MXN&destinationCurrency=GBP",
      "destinationCurrency=MXN,GBP&destinationCurrency=GBP",
    ]) {
      const res = await sandbox.rawFetch(`/exchange-rates?sourceCurrency=EUR&${query}`);
      expect(res.status, query).toBe(200);
      const body = (await res.json()) as { data: { destinationCurrency: { code?: string } }[] };
      expect(codes(body.data), query).toEqual(["GBP", "MXN"]);
    }
    const one = await sandbox.rawFetch(
      "/exchange-rates?sourceCurrency=EUR&destinationCurrency=MXN",
    );
    const oneBody = (await one.json()) as { data: { destinationCurrency: { code?: string } }[] };
    expect(codes(oneBody.data)).toEqual(["MXN"]);
  });

  it("estimates a crypto withdrawal's fee from a crypto account only", async () => {
    const usdc = (
      await sandbox.client.POST("/customers", {
        body: {
          customerType: "INDIVIDUAL",
          fullName: "Ada Lovelace",
          email: "ada@example.com",
          currencies: ["USDC", "USD"],
        },
      })
    ).data!;
    const accounts = await sandbox.client.GET("/customers/internal-accounts", {
      params: { query: { customerId: usdc.id! } },
    });
    const crypto = accounts.data!.data.find((a) => a.type === "INTERNAL_CRYPTO")!;
    const fiat = accounts.data!.data.find((a) => a.type === "INTERNAL_FIAT")!;
    const estimate = (body: Partial<Schemas["EstimateCryptoWithdrawalFeeRequest"]>) =>
      sandbox.client.POST("/crypto/estimate-withdrawal-fee", {
        body: {
          internalAccountId: crypto.id,
          currency: "USDC",
          cryptoNetwork: "SOLANA",
          amount: 1_000_000,
          destinationAddress: "7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU",
          ...body,
        },
      });
    const solana = await estimate({});
    expect(solana.response.status).toBe(200);
    expect(solana.data).toEqual({
      networkFee: 5_000,
      networkFeeAsset: "SOL",
      applicationFee: 0,
      totalFee: 5,
      netAmount: 999_995,
    });
    expect((await estimate({ cryptoNetwork: "ETHEREUM" })).data).toMatchObject({
      networkFeeAsset: "ETH",
      totalFee: 150,
    });
    expect((await estimate({ internalAccountId: fiat.id, currency: "USD" })).error).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
    });
    expect((await estimate({ currency: "USDT" })).error).toMatchObject({
      code: "INVALID_CURRENCY",
    });
    expect((await estimate({ cryptoNetwork: "DOGE" })).error).toMatchObject({
      code: "INVALID_INPUT",
    });
    expect((await estimate({ amount: 5 })).error).toMatchObject({ code: "INVALID_AMOUNT" });
    const unknown = await estimate({
      internalAccountId: "InternalAccount:00000000-0000-4000-8000-000000000000",
    });
    expect(unknown.error).toMatchObject({ status: 404, code: "REFERENCE_NOT_FOUND" });
  });

  it("prices a quote from the rate and fee, locked on either side", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD");
    const iban = await createIban(sandbox.client, customerId, "000");
    const sending = await quoteToIban(sandbox.client, account.id, iban.id, 10_000);
    expect(sending).toMatchObject({
      status: "PENDING",
      sendingCurrency: { code: "USD", name: "US Dollar", symbol: "$", decimals: 2 },
      receivingCurrency: { code: "EUR", decimals: 2 },
      totalSendingAmount: 10_000,
      platformFeesIncluded: 0,
    });
    // The quote's transaction exists from the start, waiting for execution.
    expect(await transactionOf(sandbox.client, sending.transactionId)).toMatchObject({
      type: "OUTGOING",
      status: "PENDING",
      quoteId: sending.id,
      sentAmount: { amount: 10_000 },
    });
    expect(sending.totalReceivingAmount).toBe(
      Math.floor((sending.totalSendingAmount - sending.feesIncluded) * sending.exchangeRate),
    );
    const lifetime = new Date(sending.expiresAt).getTime() - new Date(sending.createdAt).getTime();
    expect(lifetime).toBe(300_000);

    const { data: receiving } = await sandbox.client.POST("/quotes", {
      body: {
        source: { sourceType: "ACCOUNT", accountId: account.id },
        destination: { destinationType: "ACCOUNT", accountId: iban.id },
        lockedCurrencySide: "RECEIVING",
        lockedCurrencyAmount: 8_600,
      },
    });
    expect(receiving?.totalReceivingAmount).toBe(8_600);
    const principal = receiving!.totalSendingAmount - receiving!.feesIncluded;
    // The sender pays the smallest amount that delivers 86.00 EUR.
    expect(principal * receiving!.exchangeRate).toBeGreaterThanOrEqual(8_600);
    expect((principal - 1) * receiving!.exchangeRate).toBeLessThan(8_600);
  });

  it("refuses an amount that does not cover the fee, and an unsupported currency", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD");
    const iban = await createIban(sandbox.client, customerId, "000");
    const small = await sandbox.client.POST("/quotes", {
      body: {
        source: { sourceType: "ACCOUNT", accountId: account.id },
        destination: { destinationType: "ACCOUNT", accountId: iban.id },
        lockedCurrencySide: "SENDING",
        lockedCurrencyAmount: 50,
      },
    });
    expect(small.error).toMatchObject({ status: 400, code: "AMOUNT_OUT_OF_RANGE" });
    const yen = await sandbox.client.POST("/quotes", {
      body: {
        source: { sourceType: "REALTIME_FUNDING", currency: "JPY" },
        destination: { destinationType: "ACCOUNT", accountId: iban.id },
        lockedCurrencySide: "RECEIVING",
        lockedCurrencyAmount: 1_000,
      },
    });
    expect(yen.error).toMatchObject({ status: 400, code: "INVALID_CURRENCY" });
  });

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
  });

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

describe.each(databases)("the live quote's options on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const quote = (body: Schemas["QuoteRequest"], key?: string) =>
    sandbox.client.POST("/quotes", {
      body,
      ...(key ? { params: { header: { "Idempotency-Key": key } } } : {}),
    });

  it("executes at once with immediatelyExecute, and carries description and remittance to the transaction", async () => {
    const customer = await createCustomer(sandbox.client);
    const account = await createAccount(sandbox.client, customer.id, "USD", FUNDED);
    const iban = await createIban(sandbox.client, customer.id, "000");
    const key = randomUUID();
    const body: Schemas["QuoteRequest"] = {
      source: { sourceType: "ACCOUNT", accountId: account.id },
      destination: { destinationType: "ACCOUNT", accountId: iban.id },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 5_000,
      immediatelyExecute: true,
      description: "Rent, March",
      remittanceInformation: "INV-301",
    };
    const { data, response } = await quote(body, key);
    expect(response.status).toBe(201);
    expect(data).toMatchObject({ status: "COMPLETED", totalSendingAmount: 5_000 });
    expect(await balanceOf(sandbox.client, account.id)).toBe(FUNDED - 5_000);
    expect(await transactionOf(sandbox.client, data!.transactionId)).toMatchObject({
      status: "COMPLETED",
      description: "Rent, March",
      reconciliationInstructions: { reference: "INV-301" },
    });
    // The same key replays the quote; the money moved once.
    const again = await quote(body, key);
    expect(again.data).toEqual(data);
    expect(await balanceOf(sandbox.client, account.id)).toBe(FUNDED - 5_000);

    const realtime = await quote({
      ...body,
      source: { sourceType: "REALTIME_FUNDING", currency: "USD" },
    });
    expect(realtime.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
  });

  it("converts into another internal account, and pays a UMA address in its own currency", async () => {
    const customer = await createCustomer(sandbox.client);
    const usd = await createAccount(sandbox.client, customer.id, "USD", FUNDED);
    const eur = await createAccount(sandbox.client, customer.id, "EUR");
    const { data: conversion } = await quote({
      source: { sourceType: "ACCOUNT", accountId: usd.id },
      destination: { destinationType: "ACCOUNT", accountId: eur.id },
      lockedCurrencySide: "RECEIVING",
      lockedCurrencyAmount: 4_300,
      immediatelyExecute: true,
    });
    expect(conversion).toMatchObject({ status: "COMPLETED", totalReceivingAmount: 4_300 });
    expect(await balanceOf(sandbox.client, eur.id)).toBe(4_300);
    const received = await sandbox.client.GET("/transactions", {
      params: { query: { receiverAccountIdentifier: eur.id } },
    });
    expect(received.data?.data).toEqual([
      expect.objectContaining({ type: "INCOMING", quoteId: conversion!.id }),
    ]);

    const { data: uma } = await quote({
      source: { sourceType: "ACCOUNT", accountId: usd.id },
      destination: { destinationType: "UMA_ADDRESS", umaAddress: "$success.mxn@sandbox.uma.money" },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 1_000,
    });
    expect(uma?.receivingCurrency.code).toBe("MXN");
  });

  describe("strong customer authentication", () => {
    it("holds a real-time quote of an EEA customer until the SMS code authorizes it", async () => {
      const customer = await createCustomer(sandbox.client, { region: "DE" });
      const iban = await createIban(sandbox.client, customer.id, "000");
      const { data, response } = await quote({
        source: { sourceType: "REALTIME_FUNDING", currency: "USD", customerId: customer.id },
        destination: { destinationType: "ACCOUNT", accountId: iban.id },
        lockedCurrencySide: "SENDING",
        lockedCurrencyAmount: 2_000,
      });
      expect(response.status).toBe(202);
      expect(data).toMatchObject({
        status: "PENDING_AUTHORIZATION",
        scaChallenge: { factor: "SMS_OTP", availableFactors: ["SMS_OTP"] },
      });
      expect(data).not.toHaveProperty("paymentInstructions");
      expect((await transactionOf(sandbox.client, data!.transactionId)).status).toBe(
        "PENDING_AUTHORIZATION",
      );
      const path = { params: { path: { quoteId: data!.id } } };
      const resent = await sandbox.client.POST("/quotes/{quoteId}/authorize/resend", path);
      expect(resent.response.status).toBe(204);
      await logInWithSca(sandbox.client, customer.id);
      const wrong = await sandbox.client.POST("/quotes/{quoteId}/authorize", {
        ...path,
        body: { code: "654321" },
      });
      expect(wrong.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
      const right = await sandbox.client.POST("/quotes/{quoteId}/authorize", {
        ...path,
        body: { code: SANDBOX_SCA_CODE },
      });
      expect(right.data).toMatchObject({ status: "PENDING" });
      expect(right.data).not.toHaveProperty("scaChallenge");
      expect(right.data?.paymentInstructions).toHaveLength(1);
      const twice = await sandbox.client.POST("/quotes/{quoteId}/authorize", {
        ...path,
        body: { code: SANDBOX_SCA_CODE },
      });
      expect(twice.error).toMatchObject({ status: 409, code: "INVALID_STATE_TRANSITION" });
      const sent = await sandbox.client.POST("/sandbox/send", {
        body: { quoteId: data!.id, currencyCode: "USD" },
      });
      expect(sent.data).toMatchObject({ status: "COMPLETED" });
    });

    it("challenges the execution of an EEA customer's quote, and executes once authorized", async () => {
      const customer = await createCustomer(sandbox.client, { region: "FR" });
      const account = await createAccount(sandbox.client, customer.id, "USD", FUNDED);
      const iban = await createIban(sandbox.client, customer.id, "000");
      const created = await quoteToIban(sandbox.client, account.id, iban.id, 3_000);
      expect(created.status).toBe("PENDING");
      const held = await execute(sandbox.client, created.id);
      expect(held.data).toMatchObject({
        status: "PENDING_AUTHORIZATION",
        scaChallenge: { factor: "SMS_OTP" },
      });
      expect(await balanceOf(sandbox.client, account.id)).toBe(FUNDED);
      const path = { params: { path: { quoteId: created.id } } };
      // Without an SCA login the code is not even looked at.
      const noSession = await sandbox.client.POST("/quotes/{quoteId}/authorize", {
        ...path,
        body: { code: SANDBOX_SCA_CODE },
      });
      expect(noSession.error).toMatchObject({ status: 409, code: "SCA_SESSION_REQUIRED" });
      await logInWithSca(sandbox.client, customer.id);
      const done = await sandbox.client.POST("/quotes/{quoteId}/authorize", {
        params: { path: { quoteId: created.id } },
        body: { code: SANDBOX_SCA_CODE },
      });
      expect(done.data).toMatchObject({ status: "COMPLETED" });
      expect(await balanceOf(sandbox.client, account.id)).toBe(FUNDED - 3_000);
    });

    it("spends a challenge after 5 wrong codes", async () => {
      const customer = await createCustomer(sandbox.client, { region: "NL" });
      const account = await createAccount(sandbox.client, customer.id, "USD", FUNDED);
      const iban = await createIban(sandbox.client, customer.id, "000");
      const created = await quoteToIban(sandbox.client, account.id, iban.id, 3_000);
      await execute(sandbox.client, created.id);
      const path = { params: { path: { quoteId: created.id } } };
      await logInWithSca(sandbox.client, customer.id);
      for (let attempt = 1; attempt <= 5; attempt++) {
        const wrong = await sandbox.client.POST("/quotes/{quoteId}/authorize", {
          ...path,
          body: { code: "000000" },
        });
        expect(wrong.error).toMatchObject({ status: 400, details: { attemptsLeft: 5 - attempt } });
      }
      const late = await sandbox.client.POST("/quotes/{quoteId}/authorize", {
        ...path,
        body: { code: SANDBOX_SCA_CODE },
      });
      expect(late.error).toMatchObject({ status: 409, code: "INVALID_STATE_TRANSITION" });
      expect(await balanceOf(sandbox.client, account.id)).toBe(FUNDED);
    });

    it("needs a live SCA session and no lockout to authorize", async () => {
      const customer = await createCustomer(sandbox.client, { region: "DE" });
      const account = await createAccount(sandbox.client, customer.id, "USD", FUNDED);
      const iban = await createIban(sandbox.client, customer.id, "000");
      const authorize = async () => {
        const created = await quoteToIban(sandbox.client, account.id, iban.id, 1_000);
        expect((await execute(sandbox.client, created.id)).data?.status).toBe(
          "PENDING_AUTHORIZATION",
        );
        return sandbox.client.POST("/quotes/{quoteId}/authorize", {
          params: { path: { quoteId: created.id } },
          body: { code: SANDBOX_SCA_CODE },
        });
      };
      await logInWithSca(sandbox.client, customer.id);
      expect((await authorize()).data?.status).toBe("COMPLETED");

      // 15 minutes later the session is over: log in again.
      await advanceClock(sandbox.client, SCA_SESSION_SECONDS + 1);
      const expired = await authorize();
      expect(expired.error).toMatchObject({ status: 409, code: "SCA_SESSION_REQUIRED" });
      expect(expired.error?.message).toContain("expired");
      await logInWithSca(sandbox.client, customer.id);

      // Failed logins lock the customer out of authorizing too.
      const query = { params: { query: { customerId: customer.id } } };
      for (let i = 0; i < 5; i++) {
        await sandbox.client.POST("/sca/record-event", {
          ...query,
          body: { eventType: "FAILED_LOGIN_ATTEMPT" },
        });
      }
      expect((await authorize()).error).toMatchObject({ status: 423, code: "ACCOUNT_LOCKED" });
      expect(await balanceOf(sandbox.client, account.id)).toBe(FUNDED - 1_000);
    });

    it("answers 409 to authorize and resend for a customer outside the EEA", async () => {
      const customer = await createCustomer(sandbox.client);
      const account = await createAccount(sandbox.client, customer.id, "USD", FUNDED);
      const iban = await createIban(sandbox.client, customer.id, "000");
      const created = await quoteToIban(sandbox.client, account.id, iban.id, 3_000);
      const path = { params: { path: { quoteId: created.id } } };
      const authorize = await sandbox.client.POST("/quotes/{quoteId}/authorize", {
        ...path,
        body: { code: SANDBOX_SCA_CODE },
      });
      expect(authorize.error).toMatchObject({ status: 409, code: "CONFLICT" });
      expect(authorize.error?.message).toContain("needs no strong customer authentication");
      const resend = await sandbox.client.POST("/quotes/{quoteId}/authorize/resend", path);
      expect(resend.error).toMatchObject({ status: 409 });
    });
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
