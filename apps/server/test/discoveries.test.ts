import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { createBankAccount, createCustomer } from "./money-helpers.js";

// The sandbox's fixed directories (institutions, UMA providers, VASPs) and
// the receiver lookups a quote may name.

describe.each(databases)("discoveries and lookups on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  describe("GET /discoveries", () => {
    it("lists a corridor's institutions, whatever the letters' case", async () => {
      const { data, response } = await sandbox.client.GET("/discoveries", {
        params: { query: { country: "ph", currency: "PHP" } },
      });
      expect(response.status).toBe(200);
      expect(data?.data).toEqual([
        {
          bankName: "SANDBOX_BANK_PH",
          displayName: "Sandbox Bank Philippines",
          country: "PH",
          currency: "PHP",
        },
        {
          bankName: "SANDBOX_EWALLET_PH",
          displayName: "Sandbox E-Wallet Philippines",
          country: "PH",
          currency: "PHP",
        },
      ]);
    });

    it("filters by either parameter, lists everything without one, and nothing for an unknown corridor", async () => {
      const all = await sandbox.client.GET("/discoveries");
      const byCurrency = await sandbox.client.GET("/discoveries", {
        params: { query: { currency: "EUR" } },
      });
      const byCountry = await sandbox.client.GET("/discoveries", {
        params: { query: { country: "MX" } },
      });
      const unknown = await sandbox.client.GET("/discoveries", {
        params: { query: { country: "JP", currency: "JPY" } },
      });
      expect(all.data!.data!.length).toBeGreaterThan(10);
      expect(byCurrency.data!.data!.map((i) => i.country)).toEqual(["DE", "FR"]);
      expect(byCountry.data!.data!.map((i) => i.bankName)).toEqual([
        "SANDBOX_BANCO_MX",
        "SANDBOX_SPEI_MX",
      ]);
      expect(unknown.data!.data).toEqual([]);
      expect(all.data!.data!.every((i) => i.bankName.startsWith("SANDBOX_"))).toBe(true);
    });

    it("refuses a country or currency that is not a code", async () => {
      for (const query of [{ country: "PHL" }, { currency: "PESO" }, { country: "P1" }]) {
        const { error, response } = await sandbox.client.GET("/discoveries", {
          params: { query },
        });
        expect(response.status).toBe(400);
        expect(error).toMatchObject({
          code: "INVALID_INPUT",
          details: { errors: [{ field: Object.keys(query)[0] }] },
        });
      }
    });
  });

  describe("GET /uma-providers", () => {
    const names = (data: { data?: { name?: string }[] } | undefined) =>
      data?.data?.map((p) => p.name);

    it("lists every provider, the last to join first, with the total", async () => {
      const { data, response } = await sandbox.client.GET("/uma-providers");
      expect(response.status).toBe(200);
      expect(names(data)).toEqual(["Sandbox Blocked Exchange", "Sandbox Remit", "Sandbox UMA"]);
      expect(data).toMatchObject({ hasMore: false, totalCount: 3 });
      expect(data!.data![2]).toEqual({
        name: "Sandbox UMA",
        domain: "sandbox.uma.money",
        supportedRegions: ["US", "DE", "FR", "MX"],
        supportedCurrencies: [
          { code: "USD", name: "US Dollar", symbol: "$", decimals: 2 },
          { code: "EUR", name: "Euro", symbol: "€", decimals: 2 },
          { code: "MXN", name: "Mexican Peso", symbol: "$", decimals: 2 },
        ],
        lei: "SANDBOX0UMA000000001",
        allowListStatus: true,
      });
    });

    it("filters by region, currency and allow list, in either order, page by page", async () => {
      const list = (query: Record<string, unknown>) =>
        sandbox.client.GET("/uma-providers", { params: { query } });
      expect(names((await list({ countryCode: "mx" })).data)).toEqual([
        "Sandbox Blocked Exchange",
        "Sandbox UMA",
      ]);
      expect(names((await list({ currencyCode: "GBP" })).data)).toEqual(["Sandbox Remit"]);
      expect(names((await list({ hasBlockedProviders: false, sortOrder: "asc" })).data)).toEqual([
        "Sandbox UMA",
        "Sandbox Remit",
      ]);
      const first = await list({ limit: 2, sortOrder: "asc" });
      expect(first.data).toMatchObject({ hasMore: true, totalCount: 3 });
      const second = await list({ limit: 2, sortOrder: "asc", cursor: first.data!.nextCursor });
      expect(names(second.data)).toEqual(["Sandbox Blocked Exchange"]);
      expect(second.data).toMatchObject({ hasMore: false, totalCount: 3 });
      expect(second.data!.nextCursor).toBeUndefined();
    });

    it("refuses a cursor it did not make", async () => {
      const { response, error } = await sandbox.client.GET("/uma-providers", {
        params: { query: { cursor: "not-a-cursor" } },
      });
      expect(response.status).toBe(400);
      expect(error).toMatchObject({ code: "INVALID_INPUT" });
    });
  });

  describe("GET /vasps", () => {
    it("pages through the directory in name order", async () => {
      const first = await sandbox.client.GET("/vasps", { params: { query: { limit: 3 } } });
      expect(first.response.status).toBe(200);
      expect(first.data).toMatchObject({
        data: [
          { vaspName: "Sandbox Custody", url: "https://custody.sandbox.example" },
          { vaspName: "Sandbox Exchange" },
          { vaspName: "Sandbox Self-Custody Wallets" },
        ],
        hasMore: true,
      });
      expect(first.data!.data[2]!.url).toBeUndefined();
      const rest = await sandbox.client.GET("/vasps", {
        params: { query: { limit: 3, cursor: first.data!.nextCursor! } },
      });
      expect(rest.data!.data.map((v) => v.vaspName)).toEqual([
        "Sandbox Stablecoin Desk",
        "Sandbox Trading",
      ]);
      expect(rest.data!.hasMore).toBe(false);
    });
  });

  describe("lookups", () => {
    const usdQuote = (
      lookupId: string | undefined,
      umaAddress = "$success.usd@sandbox.uma.money",
    ) =>
      sandbox.client.POST("/quotes", {
        body: {
          ...(lookupId !== undefined ? { lookupId } : {}),
          source: { sourceType: "REALTIME_FUNDING", currency: "USD" },
          destination: { destinationType: "UMA_ADDRESS", umaAddress },
          lockedCurrencySide: "SENDING",
          lockedCurrencyAmount: 1000,
        },
      });

    it("$fail.lookup: the receiver's institution does not answer, so lookup and quote are 400 LOOKUP_REQUEST_FAILED", async () => {
      const lookup = await sandbox.client.GET("/receiver/uma/{receiverUmaAddress}", {
        params: { path: { receiverUmaAddress: "$fail.lookup@sandbox.uma.money" } },
      });
      expect(lookup.response.status).toBe(400);
      expect(lookup.error).toMatchObject({ code: "LOOKUP_REQUEST_FAILED", status: 400 });
      const quote = await usdQuote(undefined, "$fail.lookup@sandbox.uma.money");
      expect(quote.response.status).toBe(400);
      expect(quote.error).toMatchObject({ code: "LOOKUP_REQUEST_FAILED" });
    });

    it("a quote may name its receiver's lookup; one that does not exist is 404 LOOKUP_REQUEST_NOT_FOUND", async () => {
      const lookup = await sandbox.client.GET("/receiver/uma/{receiverUmaAddress}", {
        params: { path: { receiverUmaAddress: "$success.usd@sandbox.uma.money" } },
      });
      const quoted = await usdQuote(lookup.data!.lookupId);
      expect(quoted.response.status).toBe(201);
      const missing = await usdQuote("LookupRequest:019542f5-b3e7-1d02-0000-000000000009");
      expect(missing.response.status).toBe(404);
      expect(missing.error).toMatchObject({ code: "LOOKUP_REQUEST_NOT_FOUND", status: 404 });
    });

    it("refuses a lookup of another receiver, and hides another platform's lookups", async () => {
      const eur = await sandbox.client.GET("/receiver/uma/{receiverUmaAddress}", {
        params: { path: { receiverUmaAddress: "$success.eur@sandbox.uma.money" } },
      });
      const mismatched = await usdQuote(eur.data!.lookupId);
      expect(mismatched.response.status).toBe(400);
      expect(mismatched.error).toMatchObject({
        code: "INVALID_INPUT",
        details: { errors: [{ field: "lookupId" }] },
      });

      const customer = await createCustomer(sandbox.client, { lastName: "Lookup" });
      const account = await createBankAccount(sandbox.client, customer.id, "001", "USD");
      const byAccount = await sandbox.client.GET("/receiver/external-account/{accountId}", {
        params: { path: { accountId: account.id } },
      });
      const toUma = await usdQuote(byAccount.data!.lookupId);
      expect(toUma.response.status).toBe(400);

      const other = await sandbox.otherPlatformClient();
      const foreign = await other.GET("/receiver/uma/{receiverUmaAddress}", {
        params: { path: { receiverUmaAddress: "$success.usd@sandbox.uma.money" } },
      });
      const { response, error } = await usdQuote(foreign.data!.lookupId);
      expect(response.status).toBe(404);
      expect(error).toMatchObject({ code: "LOOKUP_REQUEST_NOT_FOUND" });
    });
  });
});
