import { createPublicKey, createVerify, verify as nodeVerify } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook, type Schemas, type SandboxClient } from "@payments-sandbox/client";
import { emitEvent } from "../src/events/outbox.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { startReceiver, waitFor, type WebhookReceiver } from "./webhook-receiver.js";

type EventRecord = Schemas["WebhookEventRecord"];

const FAST = {
  WEBHOOK_RETRY_BASE_MS: "100",
  WEBHOOK_RETRY_MAX_DELAY_MS: "400",
  WEBHOOK_POLL_MS: "50",
};

async function listAll(
  client: SandboxClient,
  query: { type?: Schemas["WebhookEventType"]; objectId?: string } = {},
): Promise<EventRecord[]> {
  const all: EventRecord[] = [];
  let cursor: string | undefined;
  do {
    const { data, error } = await client.GET("/sandbox/webhooks/events", {
      params: { query: { ...query, limit: 100, ...(cursor ? { cursor } : {}) } },
    });
    if (!data) throw new Error(`list failed: ${JSON.stringify(error)}`);
    all.push(...data.data);
    cursor = data.nextCursor;
  } while (cursor);
  return all;
}

async function eventById(client: SandboxClient, id: string): Promise<EventRecord | undefined> {
  return (await listAll(client)).find((e) => e.id === id);
}

/** Sets the endpoint; null removes it (an empty webhookEndpoint). */
async function setWebhookUrl(client: SandboxClient, url: string | null): Promise<void> {
  const { response } = await client.PATCH("/config", { body: { webhookEndpoint: url ?? "" } });
  expect(response.status).toBe(200);
}

/** Sends the test event (answered synchronously) and returns its id, from the event log. */
async function sendTest(client: SandboxClient): Promise<string> {
  const { data, response } = await client.POST("/sandbox/webhooks/test");
  expect(response.status).toBe(200);
  expect(data?.response_status).toBe(200);
  const { data: log } = await client.GET("/sandbox/webhooks/events", {
    params: { query: { type: "TEST", limit: 1 } },
  });
  return log!.data[0]!.id;
}

describe.each(databases)("platform configuration on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("starts without a webhook endpoint, supporting USD, and publishes both public keys", async () => {
    const { data, response } = await sandbox.client.GET("/config");
    expect(response.status).toBe(200);
    expect(data).toMatchObject({
      id: sandbox.server.bootstrap.platformId,
      umaDomain: "uma.sandbox.localhost",
      isRegulatedFinancialInstitution: false,
      feeConfigs: [],
      supportedCurrencies: [
        { currencyCode: "USD", enabledTransactionTypes: ["INCOMING", "OUTGOING"] },
      ],
    });
    expect(data).not.toHaveProperty("webhookEndpoint");
    const keys = (await sandbox.client.GET("/sandbox/keys")).data!;
    // A real SPKI PEM of a P-256 key, as node reads it.
    const key = createPublicKey(keys.webhookPublicKey);
    expect(key.asymmetricKeyType).toBe("ec");
    expect(key.asymmetricKeyDetails?.namedCurve).toBe("prime256v1");
    expect(keys.otpEnclavePublicKey).toMatch(/^04[0-9a-f]{128}$/);
    // No private key material in either answer.
    expect(JSON.stringify([data, keys])).not.toMatch(/PRIVATE/);
  });

  it("sets and clears the webhook endpoint, and changes only what is sent", async () => {
    const { data } = await sandbox.client.PATCH("/config", {
      body: { webhookEndpoint: "https://hooks.example.com/in", umaDomain: "Acme.Example.com" },
    });
    expect(data).toMatchObject({
      webhookEndpoint: "https://hooks.example.com/in",
      umaDomain: "acme.example.com",
    });
    expect((await sandbox.client.GET("/config")).data).toEqual(data);
    const customer = await sandbox.client.POST("/customers", {
      body: { customerType: "INDIVIDUAL", platformCustomerId: "cfg-1", fullName: "Con Fig" },
    });
    expect(customer.data?.umaAddress).toBe("$cfg-1@acme.example.com");

    const cleared = await sandbox.client.PATCH("/config", { body: { webhookEndpoint: "" } });
    expect(cleared.data).not.toHaveProperty("webhookEndpoint");
    expect(cleared.data).toMatchObject({ umaDomain: "acme.example.com" });

    // A UMA domain is a host name, checked as the domain of a UMA address is.
    for (const umaDomain of ["acme..example.com", "acme.example.com:443", "-acme.example.com"]) {
      const refused = await sandbox.client.PATCH("/config", { body: { umaDomain } });
      expect(refused.error, umaDomain).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    }
    expect((await sandbox.client.GET("/config")).data?.umaDomain).toBe("acme.example.com");
  });

  it("keeps the platform's currencies, wallet, tokenization and fee settings, and gives new customers its currencies", async () => {
    const settings = {
      supportedCurrencies: [
        {
          currencyCode: "EUR",
          minAmount: 100,
          maxAmount: 500_000,
          requiredCounterpartyFields: [{ name: "FULL_NAME" as const, mandatory: true }],
          enabledTransactionTypes: ["OUTGOING" as const],
        },
        {
          currencyCode: "USD",
          minAmount: 1,
          maxAmount: 1_000_000,
          requiredCounterpartyFields: [],
          enabledTransactionTypes: ["INCOMING" as const, "OUTGOING" as const],
        },
      ],
      embeddedWalletConfig: { appName: "Acme Wallet", otpLength: 6, expirationSeconds: 300 },
      cardTokenization2faConfig: { displayName: "Acme", sms: { bodyText: "Your code" } },
      feeConfigs: [
        {
          feeType: "CROSS_CURRENCY_TRANSACTION" as const,
          sourceCurrency: "USD",
          variableFeeBps: 50,
          fixedFee: { amount: 25, currency: "USD" },
        },
      ],
    };
    const { data } = await sandbox.client.PATCH("/config", { body: settings });
    expect(data).toMatchObject({
      ...settings,
      supportedCurrencies: settings.supportedCurrencies.map((c) => ({
        ...c,
        providerRequiredCustomerFields: [],
        providerRequiredCounterpartyCustomerFields: [],
      })),
    });
    const customer = await sandbox.client.POST("/customers", {
      body: { customerType: "INDIVIDUAL", fullName: "Multi Currency" },
    });
    expect(customer.data?.currencies).toEqual(["EUR", "USD"]);
  });

  it("answers an empty update with the configuration unchanged", async () => {
    await sandbox.client.PATCH("/config", {
      body: { webhookEndpoint: "https://hooks.example.com/kept" },
    });
    const before = (await sandbox.client.GET("/config")).data;
    const res = await sandbox.client.PATCH("/config", { body: {} });
    expect(res.response.status).toBe(200);
    expect(res.data).toEqual(before);
    expect((await sandbox.client.GET("/config")).data).toEqual(before);
    await sandbox.client.PATCH("/config", { body: { webhookEndpoint: "" } });
  });

  it("rejects an endpoint that cannot receive a POST, bad currencies and unknown fields", async () => {
    for (const body of [
      { webhookEndpoint: "ftp://example.com/x" },
      { umaDomain: "not a domain" },
      {
        supportedCurrencies: [
          {
            currencyCode: "USD",
            minAmount: 10,
            maxAmount: 5,
            requiredCounterpartyFields: [],
            enabledTransactionTypes: ["OUTGOING" as const],
          },
        ],
      },
      { webhookUrl: "https://hooks.example.com/old-name" } as never,
    ]) {
      const res = await sandbox.client.PATCH("/config", { body });
      expect(res.error, JSON.stringify(body)).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    }
    expect((await sandbox.client.GET("/config")).data).not.toHaveProperty("webhookEndpoint");
  });

  it("keeps each platform's configuration and keys to itself", async () => {
    const other = await sandbox.otherPlatformClient();
    await other.PATCH("/config", { body: { webhookEndpoint: "https://other.example.com/hook" } });
    const mine = (await sandbox.client.GET("/config")).data!;
    const theirs = (await other.GET("/config")).data!;
    expect(theirs.id).not.toBe(mine.id);
    expect(mine).not.toHaveProperty("webhookEndpoint");
    const myKeys = (await sandbox.client.GET("/sandbox/keys")).data!;
    const theirKeys = (await other.GET("/sandbox/keys")).data!;
    expect(theirKeys.webhookPublicKey).not.toBe(myKeys.webhookPublicKey);
    expect(theirKeys.otpEnclavePublicKey).not.toBe(myKeys.otpEnclavePublicKey);
  });
});

describe.each(databases)("sandbox webhook tools on %s", (kind) => {
  let sandbox: TestSandbox;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    sandbox = await startSandbox(kind, { env: FAST });
    receiver = await startReceiver();
  });
  afterEach(async () => {
    receiver.reply = () => 200;
    await setWebhookUrl(sandbox.client, receiver.url);
  });
  afterAll(async () => {
    await sandbox?.stop();
    await receiver?.close();
  });

  it("refuses a test event while no webhook URL is set", async () => {
    const { response, error } = await sandbox.client.POST("/sandbox/webhooks/test");
    expect(response.status).toBe(400);
    expect(error).toMatchObject({ status: 400, code: "WEBHOOK_ENDPOINT_NOT_SET" });
    expect(await listAll(sandbox.client, { type: "TEST" })).toEqual([]);
  });

  it("delivers a signed TEST event that verifies with the client helper and with node:crypto", async () => {
    await setWebhookUrl(sandbox.client, receiver.url);
    const eventId = await sendTest(sandbox.client);
    expect(eventId).toMatch(/^Webhook:[0-9a-f-]{36}$/);
    await waitFor("the test event", () => receiver.delivered().includes(eventId));

    const request = receiver.requests.find((r) => r.eventId === eventId)!;
    expect(request.contentType).toBe("application/json");
    const envelope = JSON.parse(request.rawBody) as Record<string, unknown>;
    expect(Object.keys(envelope).sort()).toEqual(["data", "id", "timestamp", "type"]);
    expect(envelope).toMatchObject({
      id: eventId,
      type: "TEST",
      data: { message: expect.any(String) },
    });
    expect(new Date(envelope.timestamp as string).toISOString()).toBe(envelope.timestamp);

    const pem = (await sandbox.client.GET("/sandbox/keys")).data!.webhookPublicKey;
    expect(verifyWebhook(request.rawBody, request.signature, pem)).toBe(true);
    expect(
      verifyWebhook(request.rawBody.replace('"TEST"', '"TEST2"'), request.signature, pem),
    ).toBe(false);
    // The old header name still comes, with the same signature, for receivers that read it.
    expect(request.legacySignature).toBe(request.signature);
    expect(verifyWebhook(request.rawBody, request.legacySignature, pem)).toBe(true);

    // The documented header format, checked with nothing but node:crypto.
    const header = JSON.parse(request.signature!) as { v: string; s: string };
    expect(Object.keys(header).sort()).toEqual(["s", "v"]);
    expect(header.v).toBe("1");
    const der = Buffer.from(header.s, "base64");
    expect(createVerify("SHA256").update(request.rawBody).verify(pem, der)).toBe(true);
    expect(nodeVerify("sha256", Buffer.from(request.rawBody), pem, der)).toBe(true);

    // The log shows the event as delivered, with the attempt and the exact payload.
    const record = await eventById(sandbox.client, eventId);
    expect(record).toMatchObject({
      id: eventId,
      type: "TEST",
      objectId: eventId,
      deliveryStatus: "DELIVERED",
    });
    expect(record!.attempts).toHaveLength(1);
    expect(record!.attempts[0]).toMatchObject({ httpStatus: 200 });
    expect(record!.attempts[0]!.error).toBeUndefined();
    expect(record!.payload).toEqual(envelope);
  });

  it("answers what the endpoint answered, logs the test as FAILED on a non-2xx, and 400 when unreachable", async () => {
    receiver.reply = () => 500;
    const { data } = await sandbox.client.POST("/sandbox/webhooks/test");
    expect(data).toMatchObject({ url: receiver.url, response_status: 500 });
    const { data: log } = await sandbox.client.GET("/sandbox/webhooks/events", {
      params: { query: { type: "TEST", limit: 1 } },
    });
    expect(log!.data[0]).toMatchObject({
      deliveryStatus: "FAILED",
      attempts: [{ httpStatus: 500 }],
    });

    await setWebhookUrl(sandbox.client, "http://127.0.0.1:1/hook");
    const unreachable = await sandbox.client.POST("/sandbox/webhooks/test");
    expect(unreachable.error).toMatchObject({ status: 400, code: "WEBHOOK_DELIVERY_ERROR" });
  });

  it("replays an event with the same id and body, and records the new attempt", async () => {
    const eventId = await sendTest(sandbox.client);
    await waitFor("first delivery", () => receiver.delivered().includes(eventId));

    const replay = await sandbox.client.POST("/sandbox/webhooks/events/{eventId}/replay", {
      params: { path: { eventId } },
    });
    expect(replay.response.status).toBe(202);
    expect(replay.data).toEqual({ eventId });
    await waitFor(
      "the replay",
      () => receiver.delivered().filter((id) => id === eventId).length === 2,
    );

    const copies = receiver.requests.filter((r) => r.eventId === eventId);
    expect(copies).toHaveLength(2);
    expect(copies[1]!.rawBody).toBe(copies[0]!.rawBody);
    await waitFor("the replay's attempt to be recorded", async () => {
      const record = await eventById(sandbox.client, eventId);
      return record?.attempts.length === 2 && record.deliveryStatus === "DELIVERED";
    });
  });

  it("replays only this platform's events, and only with a URL set", async () => {
    const unknown = await sandbox.client.POST("/sandbox/webhooks/events/{eventId}/replay", {
      params: { path: { eventId: "Webhook:00000000-0000-4000-8000-000000000000" } },
    });
    expect(unknown.response.status).toBe(404);
    expect(unknown.error).toMatchObject({ code: "REFERENCE_NOT_FOUND" });

    const eventId = await sendTest(sandbox.client);
    const other = await sandbox.otherPlatformClient();
    const foreign = await other.POST("/sandbox/webhooks/events/{eventId}/replay", {
      params: { path: { eventId } },
    });
    expect(foreign.response.status).toBe(404);
    expect(foreign.error).toMatchObject({ code: "REFERENCE_NOT_FOUND" });
    expect(await listAll(other)).toEqual([]);

    await setWebhookUrl(sandbox.client, null);
    const noUrl = await sandbox.client.POST("/sandbox/webhooks/events/{eventId}/replay", {
      params: { path: { eventId } },
    });
    expect(noUrl.response.status).toBe(400);
    expect(noUrl.error).toMatchObject({ code: "WEBHOOK_ENDPOINT_NOT_SET" });
  });

  it("lists events newest first with cursor pages and filters", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await sendTest(sandbox.client));
    const objectId = "Customer:6f1d6a55-4b8e-4f5e-9d4c-3b2a1f0e9d8c";
    await sandbox.server.data.transaction(() =>
      emitEvent({
        platformId: sandbox.server.bootstrap.platformId,
        type: "CUSTOMER.KYC_APPROVED",
        objectId,
        data: { id: objectId, kycStatus: "APPROVED" },
        at: new Date(),
      }),
    );

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const { data } = await sandbox.client.GET("/sandbox/webhooks/events", {
        params: { query: { type: "TEST", limit: 2, ...(cursor ? { cursor } : {}) } },
      });
      pages++;
      expect(data!.data.length).toBeLessThanOrEqual(2);
      expect(data!.hasMore).toBe(data!.nextCursor !== undefined);
      seen.push(...data!.data.map((e) => e.id));
      expect(data!.data.every((e) => e.type === "TEST")).toBe(true);
      cursor = data!.nextCursor;
    } while (cursor);
    expect(pages).toBeGreaterThan(2);
    expect(new Set(seen).size).toBe(seen.length);
    // Newest first: the five just sent lead, in reverse order.
    expect(seen.slice(0, 5)).toEqual([...ids].reverse());

    const byObject = await listAll(sandbox.client, { objectId });
    expect(byObject.map((e) => e.type)).toEqual(["CUSTOMER.KYC_APPROVED"]);
    expect(byObject[0]!.payload.data).toEqual({ id: objectId, kycStatus: "APPROVED" });

    const bad = await sandbox.client.GET("/sandbox/webhooks/events", {
      params: { query: { cursor: "not-a-cursor" } },
    });
    expect(bad.response.status).toBe(400);
  });

  it("keeps events while no URL is set (NO_ENDPOINT) and delivers them once one is", async () => {
    await setWebhookUrl(sandbox.client, null);
    const objectId = "Customer:0b9a3c1e-2d4f-4a6b-8c7d-9e0f1a2b3c4d";
    const eventId = await sandbox.server.data.transaction(() =>
      emitEvent({
        platformId: sandbox.server.bootstrap.platformId,
        type: "CUSTOMER.KYC_APPROVED",
        objectId,
        data: { id: objectId, kycStatus: "REJECTED" },
        at: new Date(),
      }),
    );
    // A poll or two passes (the dispatcher polls every 50 ms here) without
    // anything being sent.
    await waitFor(
      "the event to be listed",
      async () => !!(await eventById(sandbox.client, eventId)),
    );
    await new Promise((r) => setTimeout(r, 300));
    const waiting = await eventById(sandbox.client, eventId);
    expect(waiting).toMatchObject({ deliveryStatus: "NO_ENDPOINT", attempts: [] });
    expect(receiver.requests.some((r) => r.eventId === eventId)).toBe(false);

    await setWebhookUrl(sandbox.client, receiver.url);
    await waitFor("delivery after the URL is set", () => receiver.delivered().includes(eventId));
    await waitFor("DELIVERED", async () => {
      return (await eventById(sandbox.client, eventId))?.deliveryStatus === "DELIVERED";
    });
  });
});
