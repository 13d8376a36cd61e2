import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { q } from "../src/db/query.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { countRows, createBankAccount, createCustomer } from "./money-helpers.js";

describe.each(databases)("receiver lookups on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const lookupUma = (receiverUmaAddress: string, query: { customerId?: string } = {}) =>
    sandbox.client.GET("/receiver/uma/{receiverUmaAddress}", {
      params: { path: { receiverUmaAddress }, query },
    });

  const rate = async (from: string, to: string) => {
    const { data } = await sandbox.client.GET("/exchange-rates", {
      params: { query: { sourceCurrency: from, destinationCurrency: [to] } },
    });
    return data!.data[0]!.exchangeRate;
  };

  it("answers a sandbox UMA receiver's currency with the rate from USD, and records the lookup", async () => {
    const before = await countRows(sandbox.server.data, q.selectFrom("LookupRequest"));
    const { data, response } = await lookupUma("$Success.EUR@Sandbox.UMA.money");
    expect(response.status).toBe(200);
    expect(data).toEqual({
      receiverUmaAddress: "$success.eur@sandbox.uma.money",
      supportedCurrencies: [
        {
          currency: { code: "EUR", name: "Euro", symbol: "€", decimals: 2 },
          estimatedExchangeRate: await rate("USD", "EUR"),
          min: 1,
          max: 9007199254740991,
        },
      ],
      requiredPayerDataFields: [],
      lookupId: expect.stringMatching(/^LookupRequest:[0-9a-f-]{36}$/),
    });
    expect(await countRows(sandbox.server.data, q.selectFrom("LookupRequest"))).toBe(before + 1);
  });

  it("answers one of the platform's customers in its currencies, rated from the sender's currency", async () => {
    const receiver = await sandbox.client.POST("/customers", {
      body: {
        customerType: "INDIVIDUAL",
        platformCustomerId: "lookup-target",
        fullName: "Look Up",
        currencies: ["USD", "EUR"],
      },
    });
    const sender = await sandbox.client.POST("/customers", {
      body: { customerType: "INDIVIDUAL", fullName: "Pay Er", currencies: ["MXN"] },
    });
    const { data } = await lookupUma(receiver.data!.umaAddress, { customerId: sender.data!.id! });
    expect(data?.receiverUmaAddress).toBe("$lookup-target@uma.sandbox.localhost");
    expect(
      data?.supportedCurrencies.map((c) => [c.currency.code, c.estimatedExchangeRate]),
    ).toEqual([
      ["USD", await rate("MXN", "USD")],
      ["EUR", await rate("MXN", "EUR")],
    ]);
  });

  it("refuses unknown and malformed addresses, and another platform's customers", async () => {
    expect((await lookupUma("$nobody@sandbox.uma.money")).error).toMatchObject({
      status: 404,
      code: "UMA_NOT_FOUND",
    });
    expect((await lookupUma("$nobody@bank.example")).error).toMatchObject({
      status: 404,
      code: "UMA_NOT_FOUND",
    });
    expect((await lookupUma("not-an-address")).error).toMatchObject({
      status: 400,
      code: "INVALID_UMA_ADDRESS",
    });
    const mine = await sandbox.client.POST("/customers", {
      body: { customerType: "INDIVIDUAL", platformCustomerId: "private-1", fullName: "Pri Vate" },
    });
    const other = await sandbox.otherPlatformClient();
    const foreign = await other.GET("/receiver/uma/{receiverUmaAddress}", {
      params: { path: { receiverUmaAddress: mine.data!.umaAddress } },
    });
    expect(foreign.error).toMatchObject({ status: 404, code: "UMA_NOT_FOUND" });
    const foreignSender = await other.GET("/receiver/uma/{receiverUmaAddress}", {
      params: {
        path: { receiverUmaAddress: "$success.usd@sandbox.uma.money" },
        query: { customerId: mine.data!.id! },
      },
    });
    expect(foreignSender.error).toMatchObject({ status: 404, code: "USER_NOT_FOUND" });
  });

  it("answers an external account's currency, for this platform only", async () => {
    const owner = await createCustomer(sandbox.client, { lastName: "Owner" });
    const account = await createBankAccount(sandbox.client, owner.id, "321");
    const { data } = await sandbox.client.GET("/receiver/external-account/{accountId}", {
      params: { path: { accountId: account.id } },
    });
    expect(data).toMatchObject({
      accountId: account.id,
      supportedCurrencies: [
        { currency: { code: "USD", decimals: 2 }, estimatedExchangeRate: 1, min: 1 },
      ],
      lookupId: expect.stringMatching(/^LookupRequest:/),
    });
    const other = await sandbox.otherPlatformClient();
    const foreign = await other.GET("/receiver/external-account/{accountId}", {
      params: { path: { accountId: account.id } },
    });
    expect(foreign.error).toMatchObject({ status: 404, code: "REFERENCE_NOT_FOUND" });
  });
});
