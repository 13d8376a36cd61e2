import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateP256KeyPair } from "@payments-sandbox/crypto";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { balanceOf, executeQuote, fund, createBankAccount } from "./money-helpers.js";
import { createWallet, otpLogin, signedHeaders, type Wallet } from "./support/wallet.js";

// Executing a quote from an embedded wallet is a signed retry, stamped by an
// active session of that wallet: the real mechanism, end to end.

const FUNDED = 50_000;
const AMOUNT = 10_000;

describe.each(databases)("signed quote execution from an embedded wallet on %s", (kind) => {
  let sandbox: TestSandbox;
  let wallet: Wallet;
  let sessionKey: string;
  let ibanId: string;

  beforeAll(async () => {
    sandbox = await startSandbox(kind);
    wallet = await createWallet(sandbox);
    sessionKey = (await otpLogin(sandbox, wallet.emailMethodId)).key.privateKeyHex;
    await fund(sandbox.client, wallet.accountId, FUNDED);
    ibanId = (await createBankAccount(sandbox.client, wallet.customerId, "000", "EUR")).id;
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  async function newQuote(): Promise<string> {
    const { data, error } = await sandbox.client.POST("/quotes", {
      body: {
        source: { sourceType: "ACCOUNT", accountId: wallet.accountId },
        destination: { destinationType: "ACCOUNT", accountId: ibanId },
        lockedCurrencySide: "SENDING",
        lockedCurrencyAmount: AMOUNT,
      },
    });
    if (!data) throw new Error(JSON.stringify(error));
    return data.id;
  }

  it("answers 202 with a payload binding the quote, then executes on the stamped retry", async () => {
    const quoteId = await newQuote();
    const first = await executeQuote(sandbox.client, quoteId);
    expect(first.response.status).toBe(202);
    const challenge = first.challenge!;
    expect(challenge.requestId).toMatch(/^Request:/);
    const payload = JSON.parse(challenge.payloadToSign);
    expect(payload.type).toBe("ACTIVITY_TYPE_EXECUTE_QUOTE");
    expect(payload.parameters).toEqual({ quoteId });
    const before = await balanceOf(sandbox.client, wallet.accountId);

    const retry = await executeQuote(sandbox.client, quoteId, signedHeaders(challenge, sessionKey));
    expect(retry.response.status).toBe(200);
    expect(retry.data?.status).toBe("COMPLETED");
    expect(await balanceOf(sandbox.client, wallet.accountId)).toBe(before - AMOUNT);

    // The same Request-Id cannot authorise anything again.
    const again = await executeQuote(
      sandbox.client,
      await newQuote(),
      signedHeaders(challenge, sessionKey),
    );
    expect(again.response.status).toBe(401);
  });

  it("refuses a stamp by a key that is no session of this wallet, and moves no money", async () => {
    const quoteId = await newQuote();
    const before = await balanceOf(sandbox.client, wallet.accountId);
    const { challenge } = await executeQuote(sandbox.client, quoteId);
    const stranger = generateP256KeyPair();
    const res = await executeQuote(
      sandbox.client,
      quoteId,
      signedHeaders(challenge!, stranger.privateKeyHex),
    );
    expect(res.response.status).toBe(401);
    expect(res.error).toMatchObject({ code: "WALLET_SIGNATURE_INVALID" });

    const otherWallet = await createWallet(sandbox);
    const otherKey = (await otpLogin(sandbox, otherWallet.emailMethodId)).key.privateKeyHex;
    const foreign = await executeQuote(
      sandbox.client,
      quoteId,
      signedHeaders(challenge!, otherKey),
    );
    expect(foreign.error).toMatchObject({ code: "WALLET_SIGNATURE_INVALID" });
    expect(await balanceOf(sandbox.client, wallet.accountId)).toBe(before);
  });

  it("names a missing signature and a missing Request-Id with their own codes", async () => {
    const quoteId = await newQuote();
    const { challenge } = await executeQuote(sandbox.client, quoteId);
    const noSignature = await executeQuote(sandbox.client, quoteId, {
      "Request-Id": challenge!.requestId,
    });
    expect(noSignature.error).toMatchObject({ code: "WALLET_SIGNATURE_MISSING" });
    const { "Service-Wallet-Signature": stamp } = signedHeaders(challenge!, sessionKey);
    const noRequestId = await executeQuote(sandbox.client, quoteId, {
      "Service-Wallet-Signature": stamp,
    });
    expect(noRequestId.error).toMatchObject({ code: "REQUEST_ID_MISSING" });
  });

  it("refuses a retry for another quote than the one bound in the challenge", async () => {
    const bound = await newQuote();
    const other = await newQuote();
    const { challenge } = await executeQuote(sandbox.client, bound);
    const res = await executeQuote(sandbox.client, other, signedHeaders(challenge!, sessionKey));
    expect(res.response.status).toBe(401);
    expect(res.error).toMatchObject({ code: "WALLET_SIGNATURE_BODY_MISMATCH" });
  });
});
