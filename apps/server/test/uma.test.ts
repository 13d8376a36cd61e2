import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxClient } from "@payments-sandbox/client";
import { UMA_RECEIVER_TABLE } from "@payments-sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  advanceClock,
  balanceOf,
  createAccount,
  createCustomer,
  eventsAbout,
  executeQuote,
  transactionOf,
} from "./money-helpers.js";

const HOST = "sandbox.uma.money";

function receive(
  client: SandboxClient,
  senderUmaAddress: string,
  receiverUmaAddress: string,
  receivingCurrencyCode: string,
  receivingCurrencyAmount = 10_000,
) {
  return client.POST("/sandbox/uma/receive", {
    body: { senderUmaAddress, receiverUmaAddress, receivingCurrencyCode, receivingCurrencyAmount },
  });
}

function quoteToUma(
  client: SandboxClient,
  internalAccountId: string,
  umaAddress: string,
  currency: string,
) {
  return client.POST("/quotes", {
    body: {
      source: { sourceType: "ACCOUNT", accountId: internalAccountId },
      destination: { destinationType: "UMA_ADDRESS", umaAddress, currency },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 5_000,
    },
  });
}

describe.each(databases)("UMA on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  /** A customer reachable at its default `umaAddress`, with USD, EUR and MXN accounts. */
  async function receiver() {
    const username = `rcv.${randomUUID().slice(0, 8)}`;
    const customer = await createCustomer(sandbox.client, { platformCustomerId: username });
    const accounts = {
      USD: await createAccount(sandbox.client, customer.id, "USD"),
      EUR: await createAccount(sandbox.client, customer.id, "EUR"),
      MXN: await createAccount(sandbox.client, customer.id, "MXN"),
    };
    expect(customer.umaAddress).toBe(`$${username}@uma.sandbox.localhost`);
    return { customer, accounts, address: customer.umaAddress };
  }

  it("covers every address of the UMA table in this file", () => {
    expect(UMA_RECEIVER_TABLE.rows.map((r) => r.match)).toEqual([
      "$success.usd",
      "$success.eur",
      "$success.mxn",
      "$pending.long.usd",
      "$fail.compliance.usd",
      "$fail.lookup",
    ]);
  });

  describe("incoming payments (POST /sandbox/uma/receive)", () => {
    for (const currency of ["USD", "EUR", "MXN"] as const) {
      it(`credits a payment from $success.${currency.toLowerCase()} in ${currency}`, async () => {
        const { customer, accounts, address } = await receiver();
        const sender = `$success.${currency.toLowerCase()}@${HOST}`;
        const { data, response } = await receive(sandbox.client, sender, address, currency);
        expect(response.status).toBe(200);
        expect(data).toMatchObject({
          type: "INCOMING",
          status: "COMPLETED",
          direction: "CREDIT",
          source: { sourceType: "UMA_ADDRESS", umaAddress: sender },
          destination: { destinationType: "ACCOUNT", accountId: accounts[currency].id },
          receivedAmount: { amount: 10_000, currency: { code: currency } },
          customerId: customer.id,
          platformCustomerId: customer.platformCustomerId,
        });
        expect(await balanceOf(sandbox.client, accounts[currency].id)).toBe(10_000);
        const events = await eventsAbout(sandbox.server.data, data!.id);
        expect(events.map((e) => e.type)).toEqual(["INCOMING_PAYMENT.COMPLETED"]);
      });
    }

    it("keeps a payment from $pending.long.usd pending, with nothing credited", async () => {
      const { accounts, address } = await receiver();
      const { data } = await receive(sandbox.client, `$pending.long.usd@${HOST}`, address, "USD");
      expect(data?.status).toBe("PENDING");
      await advanceClock(sandbox.client, 86_400);
      expect((await transactionOf(sandbox.client, data!.id)).status).toBe("PENDING");
      expect(await balanceOf(sandbox.client, accounts.USD.id)).toBe(0);
    });

    it("completes a pending payment the platform approves, and fails one it rejects", async () => {
      const { customer, accounts } = await receiver();
      // The receiver named by customerId instead of its address.
      const payment = (amount: number) =>
        sandbox.client.POST("/sandbox/uma/receive", {
          body: {
            senderUmaAddress: `$pending.long.usd@${HOST}`,
            customerId: customer.id,
            receivingCurrencyCode: "USD",
            receivingCurrencyAmount: amount,
          },
        });
      const first = await payment(1_100);
      expect(first.data).toMatchObject({ status: "PENDING" });
      const approved = await sandbox.client.POST("/transactions/{transactionId}/approve", {
        params: { path: { transactionId: first.data!.id } },
        body: {},
      });
      expect(approved.data).toMatchObject({ status: "COMPLETED", type: "INCOMING" });
      expect(await balanceOf(sandbox.client, accounts.USD.id)).toBe(1_100);

      const second = await payment(900);
      const rejected = await sandbox.client.POST("/transactions/{transactionId}/reject", {
        params: { path: { transactionId: second.data!.id } },
        body: { reason: "RESTRICTED_JURISDICTION" },
      });
      expect(rejected.data).toMatchObject({ status: "FAILED" });
      expect(await balanceOf(sandbox.client, accounts.USD.id)).toBe(1_100);
      const again = await sandbox.client.POST("/transactions/{transactionId}/approve", {
        params: { path: { transactionId: second.data!.id } },
      });
      expect(again.error).toMatchObject({
        status: 409,
        code: "TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL",
      });
      const events = await eventsAbout(sandbox.server.data, first.data!.id);
      expect(events.map((e) => e.type)).toEqual([
        "INCOMING_PAYMENT.PENDING",
        "INCOMING_PAYMENT.COMPLETED",
      ]);
      const cancel = await sandbox.client.POST("/transactions/{transactionId}/cancel", {
        params: { path: { transactionId: second.data!.id } },
      });
      expect(cancel.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    });

    it("needs a receiver: receiverUmaAddress or customerId", async () => {
      const res = await sandbox.client.POST("/sandbox/uma/receive", {
        body: {
          senderUmaAddress: `$success.usd@${HOST}`,
          receivingCurrencyCode: "USD",
          receivingCurrencyAmount: 100,
        },
      });
      expect(res.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    });

    it("fails a payment from $fail.compliance.usd the compliance check", async () => {
      const { accounts, address } = await receiver();
      const { data } = await receive(
        sandbox.client,
        `$fail.compliance.usd@${HOST}`,
        address,
        "USD",
      );
      expect(data).toMatchObject({ status: "FAILED", failureReason: "COMPLIANCE_REJECTED" });
      expect(await balanceOf(sandbox.client, accounts.USD.id)).toBe(0);
    });

    it("refuses a payment from $fail.lookup, whose institution does not answer, with 400 LOOKUP_REQUEST_FAILED", async () => {
      const { accounts, address } = await receiver();
      const res = await receive(sandbox.client, `$fail.lookup@${HOST}`, address, "USD");
      expect(res.response.status).toBe(400);
      expect(res.error).toMatchObject({ status: 400, code: "LOOKUP_REQUEST_FAILED" });
      expect(await balanceOf(sandbox.client, accounts.USD.id)).toBe(0);
    });

    it("takes a payment from a sender on another host as an ordinary payment", async () => {
      const { accounts, address } = await receiver();
      const { data } = await receive(sandbox.client, "$alice@wallet.example", address, "EUR", 700);
      expect(data?.status).toBe("COMPLETED");
      expect(await balanceOf(sandbox.client, accounts.EUR.id)).toBe(700);
    });

    it("answers unknown and malformed addresses with 404 UMA_NOT_FOUND and 400 INVALID_UMA_ADDRESS", async () => {
      const { address } = await receiver();
      const success = `$success.usd@${HOST}`;
      const cases = [
        [`$nobody@${HOST}`, address, 404, "UMA_NOT_FOUND"],
        [success, "$no.such.customer@bank.example", 404, "UMA_NOT_FOUND"],
        [success, `$success.eur@${HOST}`, 404, "UMA_NOT_FOUND"],
        [success, "rcv@bank.example", 400, "INVALID_UMA_ADDRESS"],
        ["$bad space@x.example", address, 400, "INVALID_UMA_ADDRESS"],
        [success, "$a@b@c.example", 400, "INVALID_UMA_ADDRESS"],
      ] as const;
      for (const [sender, target, status, code] of cases) {
        const res = await receive(sandbox.client, sender, target, "USD");
        expect({ sender, target, error: res.error }).toMatchObject({
          error: { status, code },
        });
      }
    });

    it("refuses a currency the sender does not pay in, or the receiver has no account for", async () => {
      const { address } = await receiver();
      const wrong = await receive(sandbox.client, `$success.eur@${HOST}`, address, "USD");
      expect(wrong.error).toMatchObject({ status: 400, code: "INVALID_CURRENCY" });
      const noAccount = await receive(sandbox.client, "$alice@wallet.example", address, "GBP");
      expect(noAccount.error).toMatchObject({ status: 400, code: "INVALID_CURRENCY" });
    });
  });

  describe("quotes to a UMA address", () => {
    async function payer(currency = "USD") {
      const customer = await createCustomer(sandbox.client, { lastName: "Payer" });
      return createAccount(sandbox.client, customer.id, currency, 50_000);
    }

    for (const currency of ["USD", "EUR", "MXN"] as const) {
      it(`pays $success.${currency.toLowerCase()} in ${currency}`, async () => {
        const source = await payer();
        const { data: quote } = await quoteToUma(
          sandbox.client,
          source.id,
          `$success.${currency.toLowerCase()}@${HOST}`,
          currency,
        );
        expect(quote?.receivingCurrency.code).toBe(currency);
        const { data } = await executeQuote(sandbox.client, quote!.id);
        expect(data?.status).toBe("COMPLETED");
        expect(await balanceOf(sandbox.client, source.id)).toBe(50_000 - quote!.totalSendingAmount);
      });
    }

    it("keeps a payment to $pending.long.usd processing", async () => {
      const source = await payer();
      const { data: quote } = await quoteToUma(
        sandbox.client,
        source.id,
        `$pending.long.usd@${HOST}`,
        "USD",
      );
      const { data } = await executeQuote(sandbox.client, quote!.id);
      expect(data?.status).toBe("PROCESSING");
      await advanceClock(sandbox.client, 86_400);
      const later = await sandbox.client.GET("/quotes/{quoteId}", {
        params: { path: { quoteId: quote!.id } },
      });
      expect(later.data?.status).toBe("PROCESSING");
      expect(await balanceOf(sandbox.client, source.id)).toBe(50_000 - quote!.totalSendingAmount);
    });

    it("fails a payment to $fail.compliance.usd and refunds the source", async () => {
      const source = await payer();
      const { data: quote } = await quoteToUma(
        sandbox.client,
        source.id,
        `$fail.compliance.usd@${HOST}`,
        "USD",
      );
      const { data } = await executeQuote(sandbox.client, quote!.id);
      expect(data?.status).toBe("FAILED");
      expect(await transactionOf(sandbox.client, data!.transactionId!)).toMatchObject({
        failureReason: "COMPLIANCE_REJECTED",
      });
      expect(await balanceOf(sandbox.client, source.id)).toBe(50_000);
    });

    it("refuses unknown, malformed and wrong-currency receivers", async () => {
      const source = await payer();
      const unknown = await quoteToUma(sandbox.client, source.id, `$nobody@${HOST}`, "USD");
      // A quote names its receiver in the body: an unknown one is 400, not 404.
      expect(unknown.error).toMatchObject({ status: 400, code: "INVALID_RECEIVER" });
      const malformed = await quoteToUma(sandbox.client, source.id, `success.usd@${HOST}`, "USD");
      expect(malformed.error).toMatchObject({ status: 400, code: "INVALID_UMA_ADDRESS" });
      const currency = await quoteToUma(sandbox.client, source.id, `$success.eur@${HOST}`, "USD");
      expect(currency.error).toMatchObject({ status: 400, code: "INVALID_CURRENCY" });
      const stranger = await quoteToUma(sandbox.client, source.id, "$nobody@bank.example", "USD");
      expect(stranger.error).toMatchObject({ status: 400, code: "INVALID_RECEIVER" });
    });

    it("pays one of the platform's own customers at their UMA address", async () => {
      const source = await payer();
      const { accounts, address, customer } = await receiver();
      const { data: quote } = await quoteToUma(sandbox.client, source.id, address, "EUR");
      const { data } = await executeQuote(sandbox.client, quote!.id);
      expect(data?.status).toBe("COMPLETED");
      expect(await balanceOf(sandbox.client, source.id)).toBe(50_000 - quote!.totalSendingAmount);
      expect(await balanceOf(sandbox.client, accounts.EUR.id)).toBe(quote!.totalReceivingAmount);
      const received = await sandbox.client.GET("/transactions", {
        params: { query: { customerId: customer.id, type: "INCOMING" } },
      });
      expect(received.data?.data).toEqual([
        expect.objectContaining({
          status: "COMPLETED",
          receivedAmount: expect.objectContaining({ amount: quote!.totalReceivingAmount }),
          quoteId: quote!.id,
        }),
      ]);
    });
  });
});
