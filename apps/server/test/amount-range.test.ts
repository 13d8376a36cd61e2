import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { q } from "../src/db/query.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { activeCard, authorize } from "./card-fixtures.js";
import {
  countRows,
  balanceOf,
  createAccount,
  createBankAccount,
  createCustomer,
} from "./money-helpers.js";

// Amounts and balances stay within openapi.yaml's range (0 to 2^53 - 1): a
// write whose result would leave one outside it is refused with 400
// AMOUNT_OUT_OF_RANGE before anything is written, so every later read of the
// record still fits its schema.

const MAX = Number.MAX_SAFE_INTEGER; // 9007199254740991, the spec's maximum

describe.each(databases)("amount range on %s", (kind) => {
  let sandbox: TestSandbox;
  let customerId: string;
  beforeAll(async () => {
    sandbox = await startSandbox(kind, { hostileRequests: true });
  });
  // Accounts are opened with their customer, one per currency: each test
  // gets its own customer, so its accounts start empty.
  beforeEach(async () => {
    customerId = (await createCustomer(sandbox.client)).id;
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  function fund(accountId: string, amount: number) {
    return sandbox.client.POST("/sandbox/internal-accounts/{accountId}/fund", {
      params: { path: { accountId } },
      body: { amount },
    });
  }

  async function expectOutOfRange(res: { response: Response; error?: unknown }) {
    expect(res.response.status).toBe(400);
    expect(res.error).toMatchObject({ status: 400, code: "AMOUNT_OUT_OF_RANGE" });
  }

  async function transactionCount(accountId: string) {
    return countRows(
      sandbox.server.data,
      q.selectFrom("Transaction").where("internalAccountId", "=", accountId),
    );
  }

  it("refuses a second fund of 9007199254740990 and keeps the account readable", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD");
    const first = await fund(account.id, MAX - 1);
    expect(first.response.status).toBe(200);
    expect(first.data?.balance.amount).toBe(MAX - 1);

    await expectOutOfRange(await fund(account.id, MAX - 1));
    expect(await transactionCount(account.id)).toBe(1);

    const list = await sandbox.client.GET("/customers/internal-accounts", {
      params: { query: { customerId } },
    });
    expect(list.response.status).toBe(200);
    expect(list.data?.data.find((a) => a.id === account.id)?.balance.amount).toBe(MAX - 1);

    // Up to the maximum itself is still fine.
    const last = await fund(account.id, 1);
    expect(last.data?.balance.amount).toBe(MAX);
    await expectOutOfRange(await fund(account.id, 1));
    expect(await balanceOf(sandbox.client, account.id)).toBe(MAX);
  });

  it("refuses a transfer in or an incoming UMA payment that would overflow the balance", async () => {
    const username = `full.${randomUUID().slice(0, 8)}`;
    const receiver = await createCustomer(sandbox.client, { platformCustomerId: username });
    const account = await createAccount(sandbox.client, receiver.id, "USD", MAX - 100);
    const bank = await createBankAccount(sandbox.client, receiver.id, "789");

    await expectOutOfRange(
      await sandbox.client.POST("/transfer-in", {
        body: {
          source: { accountId: bank.id },
          destination: { accountId: account.id },
          amount: 101,
        },
      }),
    );
    await expectOutOfRange(
      await sandbox.client.POST("/sandbox/uma/receive", {
        body: {
          senderUmaAddress: "$success.usd@sandbox.uma.money",
          receiverUmaAddress: receiver.umaAddress,
          receivingCurrencyCode: "USD",
          receivingCurrencyAmount: 101,
        },
      }),
    );
    expect(await balanceOf(sandbox.client, account.id)).toBe(MAX - 100);
    expect(await transactionCount(account.id)).toBe(1); // the funding only
  });

  it("refuses a quote whose converted amount would exceed the maximum", async () => {
    const source = await createAccount(sandbox.client, customerId, "USD");
    const eur = await createBankAccount(sandbox.client, customerId, "789", "EUR");
    const quotesBefore = await countRows(sandbox.server.data, q.selectFrom("Quote"));
    // The largest amount a quote request may lock (the live contract's maximum).
    const QUOTE_MAX = 9_000_000_000_000_000;
    // Receiving the maximum in EUR costs more than the maximum in USD.
    await expectOutOfRange(
      await sandbox.client.POST("/quotes", {
        body: {
          source: { sourceType: "ACCOUNT", accountId: source.id },
          destination: { destinationType: "ACCOUNT", accountId: eur.id },
          lockedCurrencySide: "RECEIVING",
          lockedCurrencyAmount: QUOTE_MAX,
        },
      }),
    );
    expect(await countRows(sandbox.server.data, q.selectFrom("Quote"))).toBe(quotesBefore);

    // Sending the maximum in EUR buys more than the maximum in USD.
    const eurSource = await createAccount(sandbox.client, customerId, "EUR");
    const usd = await createBankAccount(sandbox.client, customerId, "789", "USD");
    await expectOutOfRange(
      await sandbox.client.POST("/quotes", {
        body: {
          source: { sourceType: "ACCOUNT", accountId: eurSource.id },
          destination: { destinationType: "ACCOUNT", accountId: usd.id },
          lockedCurrencySide: "SENDING",
          lockedCurrencyAmount: QUOTE_MAX,
        },
      }),
    );
    expect(await countRows(sandbox.server.data, q.selectFrom("Quote"))).toBe(quotesBefore);
  });

  it("refuses card changes that would overflow a total or the funding balance", async () => {
    const { card, accountId } = await activeCard(sandbox, MAX);
    const held = await authorize(sandbox, card.id, MAX);
    expect(await balanceOf(sandbox.client, accountId)).toBe(0);
    expect((await fund(accountId, MAX)).response.status).toBe(200);

    // An increment would take authorizedAmount to twice the maximum.
    await expectOutOfRange(
      await sandbox.client.POST("/sandbox/cards/{id}/simulate/increment", {
        params: { path: { id: card.id } },
        body: { cardTransactionId: held.id, amount: MAX },
      }),
    );
    // A reversal would give back the hold onto a full balance.
    await expectOutOfRange(
      await sandbox.client.POST("/sandbox/cards/{id}/simulate/reversal", {
        params: { path: { id: card.id } },
        body: { cardTransactionId: held.id },
      }),
    );
    expect(await balanceOf(sandbox.client, accountId)).toBe(MAX);

    const read = await sandbox.client.GET("/transactions/{transactionId}", {
      params: { path: { transactionId: held.id } },
    });
    expect(read.response.status).toBe(200);
    expect(read.data).toMatchObject({ status: "AUTHORIZED", authorizedAmount: { amount: MAX } });
    const list = await sandbox.client.GET("/transactions", {
      params: { query: { senderAccountIdentifier: accountId } },
    });
    expect(list.response.status).toBe(200);
  });
});
