import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createClient,
  verifyWebhook,
  type SandboxClient,
  type Schemas,
} from "@payments-sandbox/client";
import { q } from "../src/db/query.js";
import { PLATFORM_OWNED_TABLES } from "../src/platform/teardown.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { startReceiver, waitFor, type WebhookReceiver } from "./webhook-receiver.js";

type Created = Schemas["SandboxPlatformCreated"];

const FAST = {
  WEBHOOK_RETRY_BASE_MS: "100",
  WEBHOOK_RETRY_MAX_DELAY_MS: "400",
  WEBHOOK_POLL_MS: "50",
};

async function events(client: SandboxClient): Promise<Schemas["WebhookEventRecord"][]> {
  const { data, error } = await client.GET("/sandbox/webhooks/events", {
    params: { query: { limit: 100 } },
  });
  if (!data) throw new Error(`events: ${JSON.stringify(error)}`);
  return data.data;
}

async function customerIds(client: SandboxClient): Promise<string[]> {
  const { data, error } = await client.GET("/customers", { params: { query: { limit: 100 } } });
  if (!data) throw new Error(`customers: ${JSON.stringify(error)}`);
  return data.data.map((c) => c.id ?? "");
}

describe.each(databases)("isolated platforms on %s", (kind) => {
  let sandbox: TestSandbox;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    sandbox = await startSandbox(kind, { env: FAST });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await sandbox?.stop();
  });

  async function create(name: string, webhookEndpoint?: string): Promise<Created> {
    const { data, error, response } = await sandbox.client.POST("/sandbox/platforms", {
      body: { name, ...(webhookEndpoint ? { webhookEndpoint } : {}) },
    });
    expect(response.status, JSON.stringify(error)).toBe(201);
    return data!;
  }

  function clientOf(platform: Created): SandboxClient {
    return createClient({
      baseUrl: sandbox.server.baseUrl,
      tokenId: platform.clientId,
      secret: platform.clientSecret,
    });
  }

  /** A platform with a receiver, a customer and a funded account: rows in many tables. */
  async function populated(name: string) {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const platform = await create(name, receiver.url);
    const client = clientOf(platform);
    const customer = await client.POST("/customers", {
      body: { customerType: "INDIVIDUAL", fullName: `${name} customer`, email: "c@example.com" },
    });
    expect(customer.response.status).toBe(201);
    const accounts = await client.GET("/customers/internal-accounts", {
      params: { query: { customerId: customer.data!.id } },
    });
    const account = accounts.data!.data[0]!;
    const funded = await client.POST("/sandbox/internal-accounts/{accountId}/fund", {
      params: { path: { accountId: account.id } },
      body: { amount: 5_000 },
    });
    expect(funded.response.status).toBe(200);
    return { platform, client, receiver, customerId: customer.data!.id!, accountId: account.id };
  }

  it("creates two platforms at once that see nothing of each other", async () => {
    const [a, b] = await Promise.all([populated("job-a"), populated("job-b")]);
    expect(a.platform.id).not.toBe(b.platform.id);
    expect(a.platform.clientId).not.toBe(b.platform.clientId);
    expect(a.platform.webhookPublicKey).not.toBe(b.platform.webhookPublicKey);

    // Configuration: each its own, with the endpoint it was given.
    const configA = (await a.client.GET("/config")).data!;
    expect(configA).toMatchObject({ id: a.platform.id, webhookEndpoint: a.receiver.url });
    expect((await b.client.GET("/config")).data!.id).toBe(b.platform.id);
    const keysA = (await a.client.GET("/sandbox/keys")).data!;
    expect(keysA.webhookPublicKey).toBe(a.platform.webhookPublicKey);

    // Lists and gets: own objects only; the other's ids are 404.
    expect(await customerIds(a.client)).toEqual([a.customerId]);
    expect(await customerIds(b.client)).toEqual([b.customerId]);
    expect(await customerIds(sandbox.client)).not.toContain(a.customerId);
    const across = await a.client.GET("/customers/{customerId}", {
      params: { path: { customerId: b.customerId } },
    });
    expect(across.response.status).toBe(404);
    const fundAcross = await a.client.POST("/sandbox/internal-accounts/{accountId}/fund", {
      params: { path: { accountId: b.accountId } },
      body: { amount: 1 },
    });
    expect(fundAcross.response.status).toBe(404);

    // Events: each log holds its own platform's objects, and each receiver
    // gets only its platform's deliveries, signed with its platform's key.
    const eventsA = await events(a.client);
    const eventsB = await events(b.client);
    expect(eventsA.map((e) => e.objectId)).toEqual(
      expect.arrayContaining([a.customerId, a.accountId]),
    );
    const idsA = new Set(eventsA.map((e) => e.id));
    expect(eventsB.some((e) => idsA.has(e.id))).toBe(false);
    expect(eventsB.map((e) => e.objectId)).not.toContain(a.customerId);
    const replayAcross = await b.client.POST("/sandbox/webhooks/events/{eventId}/replay", {
      params: { path: { eventId: eventsA[0]!.id } },
    });
    expect(replayAcross.response.status).toBe(404);

    await waitFor("both receivers got their events", () =>
      [a, b].every((p) => p.receiver.delivered().length >= 2),
    );
    for (const [own, other] of [
      [a, b],
      [b, a],
    ] as const) {
      const ownIds = new Set((await events(own.client)).map((e) => e.id));
      for (const request of own.receiver.requests) {
        expect(ownIds.has(request.eventId)).toBe(true);
        expect(
          verifyWebhook(request.rawBody, request.signature, own.platform.webhookPublicKey),
        ).toBe(true);
        expect(
          verifyWebhook(request.rawBody, request.signature, other.platform.webhookPublicKey),
        ).toBe(false);
      }
    }

    // Clocks: advancing one moves no other.
    const advanced = await a.client.POST("/sandbox/clock/advance", { body: { seconds: 3600 } });
    expect(advanced.data?.offsetSeconds).toBe(3600);
    expect((await b.client.GET("/sandbox/clock")).data?.offsetSeconds).toBe(0);
    expect((await sandbox.client.GET("/sandbox/clock")).data?.offsetSeconds).toBe(0);
  });

  it("deletes a platform with every row it owns, and leaves the others intact", async () => {
    const [a, b] = await Promise.all([populated("doomed"), populated("survivor")]);
    // A second token and a KYC decision still pending (a delayed outcome).
    const token = await a.client.POST("/tokens", {
      body: { name: "narrow", permissions: ["VIEW"] },
    });
    expect(token.response.status).toBe(201);
    const pending = await a.client.POST("/customers", {
      body: { customerType: "INDIVIDUAL", fullName: "Pending 001", email: "p@example.com" },
    });
    expect(pending.data).toMatchObject({ kycStatus: "PENDING" });
    const link = await a.client.POST("/customers/{customerId}/kyc-link", {
      params: { path: { customerId: pending.data!.id! } },
    });
    expect(link.response.status).toBe(201);
    // A quote to an external account: it waits for execution until it expires (a job).
    const bank = await a.client.POST("/customers/external-accounts", {
      body: {
        customerId: a.customerId,
        currency: "USD",
        accountInfo: {
          accountType: "USD_ACCOUNT",
          accountNumber: "000456789000",
          routingNumber: "021000021",
          beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Ada Lovelace" },
        },
      },
    });
    expect(bank.response.status).toBe(201);
    const quote = await a.client.POST("/quotes", {
      body: {
        source: { sourceType: "ACCOUNT", accountId: a.accountId },
        destination: { destinationType: "ACCOUNT", accountId: bank.data!.id },
        lockedCurrencySide: "SENDING",
        lockedCurrencyAmount: 1_000,
      },
    });
    expect(quote.response.status).toBe(201);
    await waitFor("a's events delivered", () => a.receiver.delivered().length >= 2);
    const eventIdsA = (await events(a.client)).map((e) => e.id);

    const data = sandbox.server.data;
    const ownedRows = async (platformId: string) => {
      const counts: Record<string, number> = {};
      for (const table of PLATFORM_OWNED_TABLES) {
        const rows = await data.all(
          q.selectFrom(table).select("platformId").where("platformId", "=", platformId),
        );
        if (rows.length > 0) counts[table] = rows.length;
      }
      return counts;
    };
    const attemptsOf = (eventIds: string[]) =>
      data.all(q.selectFrom("WebhookAttempt").select("id").where("eventId", "in", eventIds));
    const platformRow = (id: string) =>
      data.one(q.selectFrom("Platform").select("id").where("id", "=", id));

    // The check below can fail: the platform owned rows in many tables.
    const before = await ownedRows(a.platform.id);
    expect(Object.keys(before)).toEqual(
      expect.arrayContaining([
        "ApiToken",
        "Customer",
        "InternalAccount",
        "LedgerEntry",
        "Transaction",
        "ExternalAccount",
        "Quote",
        "KycLink",
        "WebhookEvent",
        "Job",
      ]),
    );
    expect((await attemptsOf(eventIdsA)).length).toBeGreaterThan(0);
    const survivorBefore = await ownedRows(b.platform.id);

    const deleted = await sandbox.client.DELETE("/sandbox/platforms/{platformId}", {
      params: { path: { platformId: a.platform.id } },
    });
    expect(deleted.response.status).toBe(204);

    expect(await ownedRows(a.platform.id)).toEqual({});
    expect(await attemptsOf(eventIdsA)).toEqual([]);
    expect(await platformRow(a.platform.id)).toBeUndefined();

    // Its credentials, the first and the one it made, are refused at once.
    expect((await a.client.GET("/config")).response.status).toBe(401);
    const narrow = createClient({
      baseUrl: sandbox.server.baseUrl,
      tokenId: token.data!.clientId,
      secret: token.data!.clientSecret!,
    });
    expect((await narrow.GET("/config")).response.status).toBe(401);

    // The other platform is untouched.
    expect(await ownedRows(b.platform.id)).toEqual(survivorBefore);
    expect(await customerIds(b.client)).toEqual([b.customerId]);
    expect((await events(b.client)).length).toBeGreaterThan(0);
    expect((await b.client.GET("/config")).data?.webhookEndpoint).toBe(b.receiver.url);
    expect((await b.client.GET("/sandbox/clock")).data?.offsetSeconds).toBe(0);

    const again = await sandbox.client.DELETE("/sandbox/platforms/{platformId}", {
      params: { path: { platformId: a.platform.id } },
    });
    expect(again.response.status).toBe(404);
    expect(again.error?.code).toBe("REFERENCE_NOT_FOUND");
  });

  it("deletes a platform under its own concurrent writes: once it answers, nothing of it is left", async () => {
    const busy = await populated("busy");
    const data = sandbox.server.data;
    const leftovers = async () => {
      const counts: Record<string, number> = {};
      for (const table of PLATFORM_OWNED_TABLES) {
        const rows = await data.all(
          q.selectFrom(table).select("platformId").where("platformId", "=", busy.platform.id),
        );
        if (rows.length > 0) counts[table] = rows.length;
      }
      return counts;
    };

    // Writers that touch tokens, customers, the ledger and the outbox, until
    // the delete has answered; each request's status is kept.
    const statuses: number[] = [];
    let deleteAnswered = false;
    let written = 0;
    const writes = [
      () => busy.client.POST("/tokens", { body: { name: "in flight", permissions: ["VIEW"] } }),
      () =>
        busy.client.POST("/customers", {
          body: { customerType: "INDIVIDUAL", fullName: "In Flight", email: "f@example.com" },
        }),
      () =>
        busy.client.POST("/sandbox/internal-accounts/{accountId}/fund", {
          params: { path: { accountId: busy.accountId } },
          body: { amount: 100 },
        }),
    ];
    const writers = Array.from({ length: 6 }, async (_, i) => {
      while (!deleteAnswered) {
        const { response } = await writes[i % writes.length]!();
        statuses.push(response.status);
        if (response.status < 300) written++;
      }
    });
    await waitFor("writes under way", () => written >= 30);

    const deleted = await sandbox.client.DELETE("/sandbox/platforms/{platformId}", {
      params: { path: { platformId: busy.platform.id } },
    });
    deleteAnswered = true;
    expect(deleted.response.status).toBe(204);
    // Requests in flight when it answered end now: none of them may commit.
    await Promise.all(writers);

    expect(await leftovers()).toEqual({});
    expect(
      await data.one(q.selectFrom("Platform").select("id").where("id", "=", busy.platform.id)),
    ).toBeUndefined();
    // Every write either happened before the delete (and is gone with it) or
    // was refused: its platform, or what it wrote to, no longer exists.
    expect(statuses.filter((status) => status >= 300 && status !== 401 && status !== 404)).toEqual(
      [],
    );
    expect(statuses.filter((status) => status === 401).length).toBeGreaterThan(0);
    expect((await busy.client.GET("/config")).response.status).toBe(401);
  });

  it("lets only the sandbox's own platform, with MANAGE, create and delete platforms", async () => {
    const a = await create("tenant");
    const b = await create("neighbour");
    const tenant = clientOf(a);

    const made = await tenant.POST("/sandbox/platforms", { body: { name: "nested" } });
    expect(made.response.status).toBe(403);
    expect(made.error?.code).toBe("FORBIDDEN");
    const removed = await tenant.DELETE("/sandbox/platforms/{platformId}", {
      params: { path: { platformId: b.id } },
    });
    expect(removed.response.status).toBe(403);
    expect((await clientOf(b).GET("/config")).response.status).toBe(200);

    const self = await sandbox.client.DELETE("/sandbox/platforms/{platformId}", {
      params: { path: { platformId: sandbox.server.bootstrap.platformId } },
    });
    expect(self.response.status).toBe(403);
    expect((await sandbox.client.GET("/config")).response.status).toBe(200);

    const viewOnly = await sandbox.client.POST("/tokens", {
      body: { name: "viewer", permissions: ["VIEW"] },
    });
    const viewer = createClient({
      baseUrl: sandbox.server.baseUrl,
      tokenId: viewOnly.data!.clientId,
      secret: viewOnly.data!.clientSecret!,
    });
    expect((await viewer.POST("/sandbox/platforms", { body: {} })).response.status).toBe(403);

    const anonymous = await sandbox.rawFetch("/sandbox/platforms", {
      method: "POST",
      auth: null,
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    expect(anonymous.status).toBe(401);

    const badEndpoint = await sandbox.client.POST("/sandbox/platforms", {
      body: { webhookEndpoint: "ftp://example.com/hooks" },
    });
    expect(badEndpoint.response.status).toBe(400);

    const unnamed = await sandbox.client.POST("/sandbox/platforms", { body: {} });
    expect(unnamed.data?.name).toBe("Isolated platform");
    expect(unnamed.data).not.toHaveProperty("webhookEndpoint");
  });
});
