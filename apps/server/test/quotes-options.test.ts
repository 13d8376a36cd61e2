import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@payments-sandbox/client";
import { SANDBOX_SCA_CODE, SCA_SESSION_SECONDS } from "@payments-sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  advanceClock,
  balanceOf,
  createAccount,
  createCustomer,
  logInWithSca,
  transactionOf,
} from "./money-helpers.js";
import { FUNDED, createIban, execute, quoteToIban } from "./support/quotes.js";

// The live quote's options: immediate execution, other destinations, and
// strong customer authentication.

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
