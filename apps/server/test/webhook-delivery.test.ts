import { afterEach, describe, expect, it } from "vitest";
import type { Schemas, SandboxClient } from "@payments-sandbox/client";
import { emitEvent, type WebhookEventType } from "../src/events/outbox.js";
import { advanceWebhookRetries } from "../src/events/retry.js";
import { activeCard, purchase } from "./card-fixtures.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { balanceOf, createBankAccount, fund } from "./money-helpers.js";
import {
  emitThroughApi,
  startReceiver,
  waitFor,
  type WebhookReceiver,
} from "./webhook-receiver.js";

type EventRecord = Schemas["WebhookEventRecord"];

// Fast retries so a test sees several attempts within a second or two.
const FAST = {
  WEBHOOK_RETRY_BASE_MS: "100",
  WEBHOOK_RETRY_MAX_DELAY_MS: "400",
  WEBHOOK_POLL_MS: "50",
};

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

async function sandboxWith(
  kind: (typeof databases)[number],
  env: Record<string, string>,
): Promise<TestSandbox> {
  const sandbox = await startSandbox(kind, { env: { ...FAST, ...env } });
  cleanup.push(() => sandbox.stop());
  return sandbox;
}

async function receiverWith(reply?: Parameters<typeof startReceiver>[0]): Promise<WebhookReceiver> {
  const receiver = await startReceiver(reply);
  cleanup.push(() => receiver.close());
  return receiver;
}

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

/** One object's events as the event list gives them, newest first. */
async function eventsOf(client: SandboxClient, objectId: string): Promise<EventRecord[]> {
  const all: EventRecord[] = [];
  let cursor: string | undefined;
  do {
    const { data } = await client.GET("/sandbox/webhooks/events", {
      params: { query: { limit: 100, objectId, ...(cursor ? { cursor } : {}) } },
    });
    all.push(...data!.data);
    cursor = data!.nextCursor;
  } while (cursor);
  return all;
}

async function setWebhookUrl(client: SandboxClient, url: string): Promise<void> {
  const { response } = await client.PATCH("/config", { body: { webhookEndpoint: url } });
  expect(response.status).toBe(200);
}

/** What an area does: a state change's event, written in its own transaction. */
async function emit(
  sandbox: TestSandbox,
  objectId: string,
  data: Record<string, unknown>,
  type: WebhookEventType = "CUSTOMER.KYC_APPROVED",
): Promise<string> {
  return sandbox.server.data.transaction(() =>
    emitEvent({
      platformId: sandbox.server.bootstrap.platformId,
      type,
      objectId,
      data: { id: objectId, ...data },
      at: new Date(),
    }),
  );
}

describe.each(databases)("webhook delivery on %s", (kind) => {
  it("retries a failing receiver until it recovers, recording every attempt", async () => {
    // Fails its first five requests in five different ways, then answers 200.
    const failures = [503, 500, "hang", "reset", 302] as const;
    const receiver = await receiverWith((r) => failures[r.index] ?? 200);
    // The timeout ends the hanging request; generous enough for a busy machine.
    const sandbox = await sandboxWith(kind, { WEBHOOK_TIMEOUT_MS: "1500" });
    await setWebhookUrl(sandbox.client, receiver.url);

    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await emitThroughApi(sandbox.client));
    await waitFor("every event delivered", () =>
      ids.every((id) => receiver.delivered().includes(id)),
    );
    await waitFor("every event DELIVERED in the log", async () => {
      const events = await listAll(sandbox.client);
      return ids.every((id) => events.find((e) => e.id === id)?.deliveryStatus === "DELIVERED");
    });

    const events = (await listAll(sandbox.client)).filter((e) => ids.includes(e.id));
    const attempts = events.flatMap((e) => e.attempts);
    // One recorded attempt per request the receiver saw, no more, no fewer.
    expect(attempts).toHaveLength(receiver.requests.length);
    expect(receiver.requests.length).toBe(ids.length + failures.length);
    for (const event of events) {
      const requests = receiver.requests.filter((r) => r.eventId === event.id);
      expect(event.attempts).toHaveLength(requests.length);
      expect(event.attempts.at(-1)).toMatchObject({ httpStatus: 200 });
      expect(event.attempts.slice(0, -1).every((a) => a.httpStatus !== 200)).toBe(true);
    }
    // Each request matches its attempt: the k-th request for an event is its k-th attempt.
    for (const event of events) {
      const requests = receiver.requests.filter((r) => r.eventId === event.id);
      requests.forEach((request, k) => {
        const attempt = event.attempts[k]!;
        const failure = failures[request.index];
        if (failure === "hang") {
          expect(attempt.httpStatus).toBeUndefined();
          expect(attempt.error).toMatch(/timed out after 1500 ms/);
        } else if (failure === "reset") {
          expect(attempt.httpStatus).toBeUndefined();
          expect(attempt.error).toBeTruthy();
        } else {
          expect(attempt.httpStatus).toBe(request.answeredWith);
        }
      });
    }
    // Redeliveries carry the same event id and the same bytes.
    for (const id of ids) {
      const bodies = new Set(
        receiver.requests.filter((r) => r.eventId === id).map((r) => r.rawBody),
      );
      expect(bodies.size).toBe(1);
    }
  });

  it("delivers the events of one object in order, without holding up other objects", async () => {
    const x = "Customer:00000000-0000-4000-8000-00000000000a";
    const y = "Customer:00000000-0000-4000-8000-00000000000b";
    let xHeadFails = true;
    const seenAttempts = new Map<string, number>();
    const receiver = await receiverWith((r) => {
      const n = (seenAttempts.get(r.eventId) ?? 0) + 1;
      seenAttempts.set(r.eventId, n);
      const objectId = (JSON.parse(r.rawBody) as { data: { id: string } }).data.id;
      if (objectId === x && r.eventId === xIds[0] && xHeadFails) return 500;
      // Every other event of x fails once before it goes through.
      if (objectId === x && n === 1) return 503;
      return 200;
    });
    const xIds: string[] = [];
    const yIds: string[] = [];
    const sandbox = await sandboxWith(kind, {});
    for (let i = 0; i < 6; i++) xIds.push(await emit(sandbox, x, { step: i }));
    for (let i = 0; i < 3; i++) yIds.push(await emit(sandbox, y, { step: i }));
    await setWebhookUrl(sandbox.client, receiver.url);

    // y's events all go through while x's first event keeps failing...
    await waitFor("y delivered", () => yIds.every((id) => receiver.delivered().includes(id)));
    await waitFor("x's first event retried", () => (seenAttempts.get(xIds[0]!) ?? 0) >= 2);
    // ...and none of x's later events has been attempted meanwhile.
    expect(receiver.requests.filter((r) => xIds.slice(1).includes(r.eventId))).toEqual([]);

    xHeadFails = false;
    await waitFor("x delivered", () => xIds.every((id) => receiver.delivered().includes(id)));

    const delivered = receiver.delivered();
    expect(delivered.filter((id) => xIds.includes(id))).toEqual(xIds);
    expect(delivered.filter((id) => yIds.includes(id))).toEqual(yIds);
    // Stronger: no request for an event arrived before its predecessor's 2xx answer.
    for (const ids of [xIds, yIds]) {
      for (let k = 1; k < ids.length; k++) {
        const previousOk = receiver.requests.find(
          (r) => r.eventId === ids[k - 1] && r.answeredWith === 200,
        )!;
        const firstTry = receiver.requests.find((r) => r.eventId === ids[k])!;
        expect(firstTry.arrivedAt).toBeGreaterThan(previousOk.answeredAt!);
      }
    }
  });

  it("gives up after the retry window (FAILED), then lets the object's next event through", async () => {
    const objectId = "Customer:00000000-0000-4000-8000-00000000000c";
    let doomed = "";
    const receiver = await receiverWith((r) => (r.eventId === doomed ? 500 : 200));
    // A retry window of about one second (0.0003 hours).
    const sandbox = await sandboxWith(kind, { WEBHOOK_MAX_AGE_HOURS: "0.0003" });
    doomed = await emit(sandbox, objectId, { kycStatus: "PENDING" });
    const next = await emit(sandbox, objectId, { kycStatus: "APPROVED" });
    await setWebhookUrl(sandbox.client, receiver.url);

    await waitFor("the next event DELIVERED", async () => {
      const event = (await listAll(sandbox.client)).find((e) => e.id === next);
      return event?.deliveryStatus === "DELIVERED";
    });
    const events = await listAll(sandbox.client);
    const failed = events.find((e) => e.id === doomed)!;
    expect(failed.deliveryStatus).toBe("FAILED");
    expect(failed.attempts.length).toBeGreaterThanOrEqual(3);
    expect(failed.attempts.every((a) => a.httpStatus === 500)).toBe(true);
    const doomedRequests = receiver.requests.filter((r) => r.eventId === doomed);
    expect(doomedRequests).toHaveLength(failed.attempts.length);
    // The next event waited for the last try of the failed one.
    const firstOfNext = receiver.requests.find((r) => r.eventId === next)!;
    expect(firstOfNext.arrivedAt).toBeGreaterThan(doomedRequests.at(-1)!.answeredAt!);
  });

  it("a receiver that hangs for one platform does not delay another platform", async () => {
    const hanging = await receiverWith(() => "hang");
    const healthy = await receiverWith(() => 200);
    cleanup.push(async () => hanging.releaseHanging(200));
    // Timeouts far beyond the test: only the pool's fairness can let B through.
    const sandbox = await sandboxWith(kind, {
      WEBHOOK_TIMEOUT_MS: "120000",
      WEBHOOK_CONCURRENCY: "8",
    });
    await setWebhookUrl(sandbox.client, hanging.url);
    const other = await sandbox.otherPlatformClient();
    await setWebhookUrl(other, healthy.url);

    // More events for A than the whole pool.
    for (let i = 0; i < 12; i++) await emitThroughApi(sandbox.client);
    await waitFor("A's receiver holding requests", () => hanging.hanging() > 0);

    const forB = await emitThroughApi(other);
    await waitFor("B's event delivered", () => healthy.delivered().includes(forB));
    // A's deliveries are all still hanging: none finished, so B did not wait for them.
    expect(hanging.requests.every((r) => r.answeredWith === undefined)).toBe(true);
    expect(hanging.hanging()).toBeGreaterThan(0);
    const a = await listAll(sandbox.client);
    expect(a.every((e) => e.deliveryStatus === "PENDING" && e.attempts.length === 0)).toBe(true);
  });

  it("moves pending retries earlier when asked to (the sandbox clock's hook)", async () => {
    let failFirst = true;
    const receiver = await receiverWith(() => {
      if (failFirst) {
        failFirst = false;
        return 503;
      }
      return 200;
    });
    // First retry would be 30 to 60 minutes away.
    const sandbox = await sandboxWith(kind, {
      WEBHOOK_RETRY_BASE_MS: "3600000",
      WEBHOOK_RETRY_MAX_DELAY_MS: "3600000",
    });
    await setWebhookUrl(sandbox.client, receiver.url);
    const id = await emitThroughApi(sandbox.client);
    await waitFor("first attempt recorded", async () => {
      const event = (await listAll(sandbox.client)).find((e) => e.id === id);
      return event?.attempts.length === 1;
    });
    expect(receiver.delivered()).not.toContain(id);

    const moved = await sandbox.server.data.transaction(() =>
      advanceWebhookRetries(sandbox.server.bootstrap.platformId, 2 * 3_600_000),
    );
    expect(moved).toBe(1);
    await waitFor("the retry", () => receiver.delivered().includes(id));
  });
  it("delivers an account's concurrent balance changes in the order they committed", async () => {
    const receiver = await receiverWith();
    const sandbox = await sandboxWith(kind, {});
    await setWebhookUrl(sandbox.client, receiver.url);
    const start = 100_000;
    const { card, customerId, accountId } = await activeCard(sandbox, start);
    const bank = await createBankAccount(sandbox.client, customerId, "789");
    const setUp = await eventsOf(sandbox.client, accountId);

    // Three kinds of change, told apart by their amounts: a transfer out and
    // a funding (each its own statements) and a card authorization (the
    // debit and its event as one guarded statement).
    const changes = { transferOut: -100, funding: 7, authorization: -30 };
    const requests = Array.from({ length: 60 }, (_, i) => {
      switch (i % 3) {
        case 0:
          return sandbox.client.POST("/transfer-out", {
            body: { source: { accountId }, destination: { accountId: bank.id }, amount: 100 },
          });
        case 1:
          return fund(sandbox.client, accountId, changes.funding);
        default:
          return sandbox.client.POST("/sandbox/cards/{id}/simulate/authorization", {
            params: { path: { id: card.id } },
            body: purchase(-changes.authorization),
          });
      }
    });
    await Promise.all(requests);
    const final = await balanceOf(sandbox.client, accountId);
    expect(final).toBe(
      start + 20 * (changes.transferOut + changes.funding + changes.authorization),
    );

    // The account's events as the event list gives them, oldest first.
    const listed = (await eventsOf(sandbox.client, accountId))
      .filter((e) => !setUp.some((s) => s.id === e.id))
      .reverse();
    expect(listed).toHaveLength(60);
    const ids = listed.map((e) => e.id);
    await waitFor("every balance event delivered", () =>
      ids.every((id) => receiver.delivered().includes(id)),
    );
    const delivered = receiver.delivered().filter((id) => ids.includes(id));
    // Delivered once each, in the event list's order.
    expect(delivered).toEqual(ids);

    const snapshots = delivered.map((id) => {
      const body = receiver.requests.find((r) => r.eventId === id && r.answeredWith === 200)!;
      const envelope = JSON.parse(body.rawBody) as {
        type: string;
        timestamp: string;
        data: { balance: { amount: number } };
      };
      expect(envelope.type).toBe("INTERNAL_ACCOUNT.BALANCE_UPDATED");
      return { timestamp: Date.parse(envelope.timestamp), balance: envelope.data.balance.amount };
    });
    // Each snapshot is the one before it changed by exactly one of the
    // requests, and the last is the balance the account ends on.
    const kinds = Object.values(changes);
    let before = start;
    const seen: number[] = [];
    for (const [i, snapshot] of snapshots.entries()) {
      const change = snapshot.balance - before;
      expect(kinds, `change ${i}: ${before} to ${snapshot.balance}`).toContain(change);
      seen.push(change);
      if (i > 0) expect(snapshot.timestamp).toBeGreaterThan(snapshots[i - 1]!.timestamp);
      before = snapshot.balance;
    }
    expect(before).toBe(final);
    for (const change of kinds) expect(seen.filter((c) => c === change)).toHaveLength(20);
    // Sixty requests and as many deliveries, one after another, on a shared machine.
  }, 90_000);
});
