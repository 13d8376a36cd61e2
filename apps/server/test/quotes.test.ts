import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Schemas } from "@payments-sandbox/client";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { createAccount, createCustomer, transactionOf } from "./money-helpers.js";
import { createIban, quoteToIban } from "./support/quotes.js";

// Quotes: exchange rates, fees and prices. Paying a quote is in
// quotes-payments.test.ts, the live quote's options in quotes-options.test.ts.

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
});
