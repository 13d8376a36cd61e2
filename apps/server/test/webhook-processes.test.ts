import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createClient, type Schemas, type SandboxClient } from "@payments-sandbox/client";
import { repoRoot } from "../src/paths.js";
import { parseDatabaseUrl } from "../src/db/client.js";
import { Database } from "../src/db/database.js";
import { insertAll, q } from "../src/db/query.js";
import { outboxRow } from "../src/events/outbox.js";
import {
  databases,
  freshDatabase,
  migratedDatabase,
  startSandbox,
  type TestSandbox,
} from "./harness.js";
import {
  emitThroughApi,
  startReceiver,
  waitFor,
  type WebhookReceiver,
} from "./webhook-receiver.js";

// Several server processes on one database: the scale-out story, and what a
// crash leaves behind.

type EventRecord = Schemas["WebhookEventRecord"];

const FAST = {
  WEBHOOK_RETRY_BASE_MS: "100",
  WEBHOOK_RETRY_MAX_DELAY_MS: "400",
  WEBHOOK_POLL_MS: "50",
};
const mainJs = join(repoRoot, "apps/server/dist/main.js");

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function listAll(client: SandboxClient): Promise<EventRecord[]> {
  const all: EventRecord[] = [];
  let cursor: string | undefined;
  do {
    const { data } = await client.GET("/sandbox/webhooks/events", {
      params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } },
    });
    all.push(...data!.data);
    cursor = data!.nextCursor;
  } while (cursor);
  return all;
}

async function allDelivered(client: SandboxClient, ids: string[]): Promise<boolean> {
  const events = new Map((await listAll(client)).map((e) => [e.id, e]));
  const done = ids.every((id) => events.get(id)?.deliveryStatus === "DELIVERED");
  // Listing is not free: do not hammer the servers under test.
  if (!done) await new Promise((r) => setTimeout(r, 200));
  return done;
}

/** The built server as its own OS process, so it can really be killed. */
async function spawnServer(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; baseUrl: string }> {
  const child = spawn(process.execPath, [mainJs], {
    env: { PATH: process.env.PATH ?? "", PORT: "0", LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanup.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const m = /Base URL:\s+(\S+)/.exec(output);
      if (m) {
        clearInterval(timer);
        resolve(m[1]!);
      }
    }, 25);
    child.once("exit", (code) => {
      clearInterval(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
  return { child, baseUrl };
}

const countDelivered = q
  .selectFrom("WebhookEvent")
  .select((e) => e.fn.countAll<number>().as("n"))
  .where("status", "=", "DELIVERED")
  .where("objectId", "like", "Customer:bulk-%");

/**
 * `count` events waiting in a platform's outbox, written straight into it
 * (the API would take most of the test's time making them): `perObject` per
 * object, each object's in order. Returns each object's event ids in order.
 */
async function writeWaitingEvents(
  url: string,
  platformId: string,
  count: number,
  perObject: number,
): Promise<Map<string, string[]>> {
  const db = Database.open(parseDatabaseUrl(url));
  const byObject = new Map<string, string[]>();
  const rows = [];
  for (let i = 0; i < count; i++) {
    const objectId = `Customer:bulk-${Math.floor(i / perObject)}`;
    const row = outboxRow({
      platformId,
      type: "CUSTOMER.KYC_APPROVED",
      objectId,
      data: { id: objectId, n: i },
      at: new Date(),
    });
    rows.push({ table: "WebhookEvent", row: { ...row, attemptCount: 0, replayCount: 0 } });
    byObject.set(objectId, [...(byObject.get(objectId) ?? []), row.id]);
  }
  for (let i = 0; i < rows.length; i += 500) {
    const part = rows.slice(i, i + 500);
    await db.transaction(() => insertAll(part));
  }
  await db.close();
  return byObject;
}

describe.each(databases)("webhooks across server processes on %s", (kind) => {
  it("two server processes deliver each of 10,000 waiting events once, each object's in order", async () => {
    const receiver = await startReceiver(() => 200);
    cleanup.push(() => receiver.close());
    const database = await migratedDatabase(kind);
    cleanup.push(() => database.drop());
    const token = { tokenId: randomUUID(), secret: randomBytes(24).toString("base64url") };
    const env = {
      DATABASE_URL: database.url,
      SANDBOX_TOKEN_ID: token.tokenId,
      SANDBOX_TOKEN_SECRET: token.secret,
    };
    const first = await spawnServer(env);
    const second = await spawnServer(env);
    const client = createClient({ baseUrl: first.baseUrl, ...token });
    const { data: config } = await client.GET("/config");
    // Waiting as NO_ENDPOINT until the URL is set: both processes then
    // compete for the whole backlog at once.
    const byObject = await writeWaitingEvents(database.url, config!.id!, 10_000, 5);
    await createClient({ baseUrl: second.baseUrl, ...token }).PATCH("/config", {
      body: { webhookEndpoint: receiver.url },
    });

    await waitFor("all 10,000 received", () => receiver.requests.length >= 10_000, 240_000);
    // Give a duplicate in flight the chance to show up before counting.
    await new Promise((r) => setTimeout(r, 1000));

    const received = receiver.requests.map((r) => r.eventId);
    expect(received.length - new Set(received).size).toBe(0);
    expect(received).toHaveLength(10_000);
    // Each object's events arrived in the order they were written.
    const position = new Map(received.map((id, i) => [id, i]));
    for (const ids of byObject.values()) {
      const arrived = ids.map((id) => position.get(id)!);
      expect(arrived).toEqual([...arrived].sort((a, b) => a - b));
    }
    // And each was recorded as delivered, by its one 2xx attempt (a
    // connection refused on a loaded machine may add a failed one).
    const db = Database.open(database.target);
    cleanup.push(() => db.close());
    const recorded = async () =>
      Number((await db.one(countDelivered))?.n ?? 0) === 10_000 ||
      (await new Promise((r) => setTimeout(r, 200)), false);
    await waitFor("all 10,000 DELIVERED", recorded, 30_000);
    const attempts = await db.one(
      q
        .selectFrom("WebhookAttempt")
        .innerJoin("WebhookEvent", "WebhookEvent.id", "WebhookAttempt.eventId")
        .select((e) => e.fn.countAll<number>().as("n"))
        .where("WebhookEvent.objectId", "like", "Customer:bulk-%")
        .where("WebhookAttempt.httpStatus", "=", 200),
    );
    expect(Number(attempts?.n)).toBe(10_000);
  }, 300_000);

  it("two servers on one database deliver each of 200 events exactly once", async () => {
    const receiver = await startReceiver(() => 200);
    cleanup.push(() => receiver.close());
    const first = await startSandbox(kind, { env: FAST });
    cleanup.push(() => first.stop());
    const second = await first.startAnother();
    cleanup.push(() => second.stop());
    expect(second.server.bootstrap.platformId).toBe(first.server.bootstrap.platformId);
    await second.client.PATCH("/config", { body: { webhookEndpoint: receiver.url } });

    // Both servers take requests and both dispatchers compete for the events.
    const ids: string[] = [];
    const servers: TestSandbox[] = [first, second];
    for (let batch = 0; batch < 20; batch++) {
      const sent = await Promise.all(
        Array.from({ length: 10 }, (_, i) => emitThroughApi(servers[(batch + i) % 2]!.client)),
      );
      ids.push(...sent);
    }
    expect(new Set(ids).size).toBe(200);

    await waitFor(
      "all 200 received",
      () => new Set(receiver.delivered()).size >= ids.length,
      90_000,
    );
    await waitFor("all 200 DELIVERED", () => allDelivered(first.client, ids));
    // Give a duplicate in flight the chance to show up before counting.
    await new Promise((r) => setTimeout(r, 500));

    const received = receiver.requests.map((r) => r.eventId);
    expect(received).toHaveLength(200);
    expect(new Set(received)).toEqual(new Set(ids));
    const events = (await listAll(second.client)).filter((e) => ids.includes(e.id));
    expect(events).toHaveLength(200);
    expect(events.every((e) => e.attempts.length === 1 && e.attempts[0]!.httpStatus === 200)).toBe(
      true,
    );
  }, 120_000);

  it("a killed server loses nothing: the next one at once sends again what was in flight, and only that", async () => {
    let reply: number | "hang" = 200;
    const receiver: WebhookReceiver = await startReceiver(() => reply);
    cleanup.push(() => receiver.close());
    const database = await freshDatabase(kind);
    cleanup.push(() => database.drop());
    const token = { tokenId: randomUUID(), secret: randomBytes(24).toString("base64url") };
    // A lease far longer than the test: the killed process's deliveries must
    // be taken over because it is gone, not because its lease ran out.
    const webhookEnv = { ...FAST, WEBHOOK_TIMEOUT_MS: "1000", WEBHOOK_LEASE_MS: "600000" };
    const { child, baseUrl } = await spawnServer({
      DATABASE_URL: database.url,
      SANDBOX_TOKEN_ID: token.tokenId,
      SANDBOX_TOKEN_SECRET: token.secret,
      ...webhookEnv,
    });
    const client = createClient({ baseUrl, ...token });
    await client.PATCH("/config", { body: { webhookEndpoint: receiver.url } });

    // Delivered and recorded before the crash: never sent again.
    const settled: string[] = [];
    for (let i = 0; i < 5; i++) settled.push(await emitThroughApi(client));
    await waitFor("the first events DELIVERED", () => allDelivered(client, settled));

    reply = 503;
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await emitThroughApi(client));
    // Every event has been tried (and refused) at least once...
    await waitFor("every event attempted", () =>
      ids.every((id) => receiver.requests.some((r) => r.eventId === id)),
    );
    // ...and at least one is in flight when the process dies.
    reply = "hang";
    await waitFor("a delivery in flight", () => receiver.hanging() > 0);
    const inFlight = receiver.requests
      .filter((r) => r.answeredWith === undefined)
      .map((r) => r.eventId);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    expect(new Set(receiver.delivered())).toEqual(new Set(settled));

    reply = 200;
    const next = await startSandbox(kind, { databaseUrl: database.url, env: webhookEnv });
    cleanup.push(() => next.stop());
    await waitFor("every event delivered after the restart", () =>
      ids.every((id) => receiver.delivered().includes(id)),
    );
    await waitFor("every event DELIVERED", () => allDelivered(next.client, ids));
    // The event whose delivery was cut off was taken over.
    expect(inFlight.length).toBeGreaterThan(0);
    for (const id of settled) {
      expect(receiver.requests.filter((r) => r.eventId === id)).toHaveLength(1);
    }
    for (const id of inFlight) expect(receiver.delivered()).toContain(id);
    // Each event's log ends with the 200 of the new server.
    const events = (await listAll(next.client)).filter((e) => ids.includes(e.id));
    for (const event of events) expect(event.attempts.at(-1)?.httpStatus).toBe(200);
  }, 120_000);
});
