import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgentClient, type Schemas } from "@payments-sandbox/client";
import { createStamp, generateP256KeyPair } from "@payments-sandbox/crypto";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  advanceClock,
  balanceOf,
  createAccount,
  createBankAccount,
  executeQuote,
  fund,
} from "./money-helpers.js";
import { policy } from "./support/agent-policy.js";
import { createWallet, otpLogin, signedHeaders, type Wallet } from "./support/wallet.js";

// Paying from an embedded wallet is one signed call, as in production: the
// quote carries the payload, the wallet's session key stamps it, and
// POST /quotes/{quoteId}/execute with that stamp executes it at once.

type Quote = Schemas["Quote"];

const FUNDED = 100_000;
const AMOUNT = 10_000;

/** The payload a quote from an embedded wallet carries; fails the test when there is none. */
function payloadOf(quote: Quote): string {
  const info = quote.paymentInstructions?.[0]?.accountOrWalletInfo;
  if (info?.accountType !== "EMBEDDED_WALLET") {
    throw new Error(`no EMBEDDED_WALLET instructions: ${JSON.stringify(quote)}`);
  }
  return info.payloadToSign;
}

const stamp = (quote: Quote, privateKeyHex: string) => ({
  "Service-Wallet-Signature": createStamp(payloadOf(quote), privateKeyHex),
});

describe.each(databases)("executing a quote from an embedded wallet on %s", (kind) => {
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

  async function newQuote(amount = AMOUNT): Promise<Quote> {
    const { data, error } = await sandbox.client.POST("/quotes", {
      body: {
        source: { sourceType: "ACCOUNT", accountId: wallet.accountId },
        destination: { destinationType: "ACCOUNT", accountId: ibanId },
        lockedCurrencySide: "SENDING",
        lockedCurrencyAmount: amount,
      },
    });
    if (!data) throw new Error(JSON.stringify(error));
    return data;
  }

  async function statusOf(quoteId: string): Promise<Quote["status"] | undefined> {
    const { data } = await sandbox.client.GET("/quotes/{quoteId}", {
      params: { path: { quoteId } },
    });
    return data?.status;
  }

  it("carries a payload binding the quote, and executes at once with its stamp", async () => {
    const quote = await newQuote();
    const payload = payloadOf(quote);
    expect(JSON.parse(payload)).toEqual({
      organizationId: expect.stringMatching(/^Platform:/),
      type: "ACTIVITY_TYPE_EXECUTE_QUOTE",
      timestampMs: String(Date.parse(quote.createdAt)),
      parameters: {
        quoteId: quote.id,
        sourceAccountId: wallet.accountId,
        destination: { destinationType: "ACCOUNT", accountId: ibanId },
        sendingAmount: String(quote.totalSendingAmount),
        sendingCurrency: quote.sendingCurrency.code,
        receivingAmount: String(quote.totalReceivingAmount),
        receivingCurrency: quote.receivingCurrency.code,
        expiresAt: new Date(quote.expiresAt).toISOString(),
      },
    });
    // Reading the quote again gives the same bytes to sign.
    const read = await sandbox.client.GET("/quotes/{quoteId}", {
      params: { path: { quoteId: quote.id } },
    });
    expect(payloadOf(read.data!)).toBe(payload);

    const before = await balanceOf(sandbox.client, wallet.accountId);
    const executed = await executeQuote(sandbox.client, quote.id, stamp(quote, sessionKey));
    expect(executed.response.status).toBe(200);
    expect(executed.data).toMatchObject({ id: quote.id, status: "COMPLETED" });
    expect(await balanceOf(sandbox.client, wallet.accountId)).toBe(before - AMOUNT);

    // The quote's state makes the stamp single-use.
    const again = await executeQuote(sandbox.client, quote.id, stamp(quote, sessionKey));
    expect(again.response.status).toBe(409);
    expect(again.error).toMatchObject({ code: "INVALID_STATE_TRANSITION" });
    expect(await balanceOf(sandbox.client, wallet.accountId)).toBe(before - AMOUNT);
  });

  it("refuses a missing or malformed stamp with its code and a reason, and moves nothing", async () => {
    const quote = await newQuote();
    const before = await balanceOf(sandbox.client, wallet.accountId);

    const missing = await executeQuote(sandbox.client, quote.id);
    expect(missing.response.status).toBe(401);
    expect(missing.error).toMatchObject({
      code: "WALLET_SIGNATURE_MISSING",
      reason: expect.stringContaining("payloadToSign"),
    });
    const malformed = await executeQuote(sandbox.client, quote.id, {
      "Service-Wallet-Signature": "not-a-stamp",
    });
    expect(malformed.response.status).toBe(401);
    expect(malformed.error).toMatchObject({
      code: "WALLET_SIGNATURE_MALFORMED",
      reason: expect.any(String),
    });
    // A Request-Id changes nothing: execution has no challenge to name.
    const withRequestId = await executeQuote(sandbox.client, quote.id, {
      "Request-Id": `Request:${randomUUID()}`,
    });
    expect(withRequestId.error).toMatchObject({ code: "WALLET_SIGNATURE_MISSING" });

    expect(await balanceOf(sandbox.client, wallet.accountId)).toBe(before);
    expect(await statusOf(quote.id)).toBe("PENDING");
  });

  it("refuses a stamp over another quote's payload", async () => {
    const signed = await newQuote();
    const other = await newQuote();
    expect(payloadOf(other)).not.toBe(payloadOf(signed));
    const before = await balanceOf(sandbox.client, wallet.accountId);

    const res = await executeQuote(sandbox.client, other.id, stamp(signed, sessionKey));
    expect(res.response.status).toBe(401);
    expect(res.error).toMatchObject({
      code: "WALLET_SIGNATURE_INVALID",
      reason: "Signature does not verify over payloadToSign",
    });
    expect(await balanceOf(sandbox.client, wallet.accountId)).toBe(before);
    expect(await statusOf(other.id)).toBe("PENDING");
    expect(await statusOf(signed.id)).toBe("PENDING");
  });

  it("refuses keys that are no active session of the source wallet", async () => {
    const quote = await newQuote();
    const before = await balanceOf(sandbox.client, wallet.accountId);
    const notASession = "Signer is not an active session key of this wallet";

    const stranger = generateP256KeyPair();
    const byStranger = await executeQuote(
      sandbox.client,
      quote.id,
      stamp(quote, stranger.privateKeyHex),
    );
    expect(byStranger.response.status).toBe(401);
    expect(byStranger.error).toMatchObject({
      code: "WALLET_SIGNATURE_INVALID",
      reason: notASession,
    });

    // An active session, of another wallet.
    const otherWallet = await createWallet(sandbox);
    const otherKey = (await otpLogin(sandbox, otherWallet.emailMethodId)).key.privateKeyHex;
    const foreign = await executeQuote(sandbox.client, quote.id, stamp(quote, otherKey));
    expect(foreign.error).toMatchObject({ code: "WALLET_SIGNATURE_INVALID", reason: notASession });

    // A session of this wallet that has ended.
    const ended = await otpLogin(sandbox, wallet.emailMethodId);
    const logout = await sandbox.client.DELETE("/auth/sessions/{id}", {
      params: { path: { id: ended.session.id } },
    });
    expect(logout.response.status).toBe(202);
    const revoked = await sandbox.client.DELETE("/auth/sessions/{id}", {
      params: {
        path: { id: ended.session.id },
        header: signedHeaders(logout.data!, ended.key.privateKeyHex),
      },
    });
    expect(revoked.response.status).toBe(204);
    const byEnded = await executeQuote(
      sandbox.client,
      quote.id,
      stamp(quote, ended.key.privateKeyHex),
    );
    expect(byEnded.error).toMatchObject({ code: "WALLET_SIGNATURE_INVALID", reason: notASession });

    expect(await balanceOf(sandbox.client, wallet.accountId)).toBe(before);
    expect(await statusOf(quote.id)).toBe("PENDING");
  });

  it("keeps the Idempotency-Key free across a 401, then replays the one execution", async () => {
    const quote = await newQuote();
    const before = await balanceOf(sandbox.client, wallet.accountId);
    const key = randomUUID();

    const refused = await executeQuote(sandbox.client, quote.id, { "Idempotency-Key": key });
    expect(refused.error).toMatchObject({ status: 401, code: "WALLET_SIGNATURE_MISSING" });

    const headers = { "Idempotency-Key": key, ...stamp(quote, sessionKey) };
    const executed = await executeQuote(sandbox.client, quote.id, headers);
    expect(executed.response.status).toBe(200);
    const replay = await executeQuote(sandbox.client, quote.id, headers);
    expect(replay.response.status).toBe(200);
    expect(replay.data).toEqual(executed.data);
    expect(await balanceOf(sandbox.client, wallet.accountId)).toBe(before - AMOUNT);
  });

  it("asks no stamp of other sources, whose quotes carry no wallet payload", async () => {
    const usd = await createAccount(sandbox.client, wallet.customerId, "USD", FUNDED);
    expect(usd.type).not.toBe("EMBEDDED_WALLET");
    const { data: quote } = await sandbox.client.POST("/quotes", {
      body: {
        source: { sourceType: "ACCOUNT", accountId: usd.id },
        destination: { destinationType: "ACCOUNT", accountId: ibanId },
        lockedCurrencySide: "SENDING",
        lockedCurrencyAmount: AMOUNT,
      },
    });
    expect(quote?.paymentInstructions).toBeUndefined();
    const executed = await executeQuote(sandbox.client, quote!.id);
    expect(executed.response.status).toBe(200);
    expect(executed.data?.status).toBe("COMPLETED");
  });

  it("refuses immediatelyExecute from a wallet, whose execution needs the stamp", async () => {
    const { response, error } = await sandbox.client.POST("/quotes", {
      body: {
        source: { sourceType: "ACCOUNT", accountId: wallet.accountId },
        destination: { destinationType: "ACCOUNT", accountId: ibanId },
        lockedCurrencySide: "SENDING",
        lockedCurrencyAmount: AMOUNT,
        immediatelyExecute: true,
      },
    });
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ code: "INVALID_INPUT" });
  });

  it("lets an agent execute its wallet quote with the wallet's stamp", async () => {
    const created = await sandbox.client.POST("/agents", {
      body: { name: "Wallet payer", customerId: wallet.customerId, policy: policy() },
    });
    const redeemed = await createAgentClient({ baseUrl: sandbox.server.baseUrl }).POST(
      "/agents/device-codes/{code}/redeem",
      { params: { path: { code: created.data!.deviceCode.code } } },
    );
    const agent = createAgentClient({
      baseUrl: sandbox.server.baseUrl,
      accessToken: redeemed.data!.accessToken,
    });
    const { data: quote } = await agent.POST("/agents/me/quotes", {
      body: {
        source: { sourceType: "ACCOUNT", accountId: wallet.accountId },
        destination: { destinationType: "ACCOUNT", accountId: ibanId },
        lockedCurrencySide: "SENDING",
        lockedCurrencyAmount: AMOUNT,
      },
    });
    const before = await balanceOf(sandbox.client, wallet.accountId);
    const execute = (header: Record<string, string>) =>
      agent.POST("/agents/me/quotes/{quoteId}/execute", {
        params: { path: { quoteId: quote!.id }, header },
      });

    const unsigned = await execute({});
    expect(unsigned.response.status).toBe(401);
    expect(unsigned.error).toMatchObject({ code: "WALLET_SIGNATURE_MISSING" });
    expect(await balanceOf(sandbox.client, wallet.accountId)).toBe(before);

    const executed = await execute(stamp(quote!, sessionKey));
    expect(executed.response.status).toBe(200);
    expect(executed.data).toMatchObject({
      type: "EXECUTE_QUOTE",
      status: "APPROVED",
      quote: { id: quote!.id, status: "COMPLETED" },
    });
    expect(await balanceOf(sandbox.client, wallet.accountId)).toBe(before - AMOUNT);
  });

  // Last: it moves the platform's clock past the quotes made so far.
  it("does not execute once the quote, and with it the payload, has expired", async () => {
    const quote = await newQuote();
    const before = await balanceOf(sandbox.client, wallet.accountId);
    // Advancing the clock runs the quote's expiry before it answers.
    await advanceClock(sandbox.client, 301);
    expect(await statusOf(quote.id)).toBe("EXPIRED");
    const fresh = await otpLogin(sandbox, wallet.emailMethodId);
    const res = await executeQuote(sandbox.client, quote.id, stamp(quote, fresh.key.privateKeyHex));
    expect(res.response.status).toBe(409);
    expect(res.error).toMatchObject({ code: "INVALID_STATE_TRANSITION" });
    expect(await balanceOf(sandbox.client, wallet.accountId)).toBe(before);
  });
});
