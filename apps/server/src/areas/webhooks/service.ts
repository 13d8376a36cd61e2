import type { Schemas } from "@payments-sandbox/client";
import { randomUUID } from "node:crypto";
import { insert, q, type Row } from "../../db/query.js";
import { ApiError, notFound } from "../../errors.js";
import { outboxRow } from "../../events/outbox.js";
import type { PostResult } from "../../events/webhook-post.js";
import type { Query } from "../../http/operation-types.js";
import type { RequestContext, Services } from "../../http/context.js";
import { decodeCursor, newestPage, toPage, type Page } from "../../http/pagination.js";
import { newId } from "../../ids.js";

export type WebhookEventRecord = Schemas["WebhookEventRecord"];
export type WebhookDeliveryAccepted = Schemas["WebhookDeliveryAccepted"];
export type TestWebhookResponse = Schemas["TestWebhookResponse"];

/** One signed POST to a webhook endpoint (the dispatcher's), keeping the answer. */
export type WebhookSend = (
  url: string,
  payload: string,
  privateKeyHex: string,
) => Promise<{ outcome: PostResult; latencyMs: number }>;
type DeliveryStatus = Schemas["WebhookDeliveryStatus"];
type Attempt = Schemas["WebhookDeliveryAttempt"];
type AttemptRow = Row<"WebhookAttempt">;
type EventRow = Row<"WebhookEvent">;

/** The query of listWebhookEvents, as validated. */
export type WebhookEventFilter = Query<"listWebhookEvents">;

function toAttempt(row: AttemptRow): Attempt {
  return {
    attemptedAt: row.attemptedAt.toISOString(),
    latencyMs: row.latencyMs,
    ...(row.httpStatus !== null ? { httpStatus: row.httpStatus } : {}),
    ...(row.error !== null ? { error: row.error } : {}),
  };
}

function deliveryStatus(row: EventRow, hasEndpoint: boolean): DeliveryStatus {
  // Waiting events are PENDING in the table; without a URL they are shown
  // as NO_ENDPOINT, and setting a URL sends them.
  if (row.status === "PENDING" && !hasEndpoint) return "NO_ENDPOINT";
  return row.status as DeliveryStatus;
}

const endpointNotSet = () =>
  new ApiError(400, "WEBHOOK_ENDPOINT_NOT_SET", "Set webhookEndpoint with PATCH /config first.");

/** The sandbox's webhook tools: test event, event log, replay. */
export class WebhookService {
  constructor(
    private readonly services: Services,
    /** Wakes the dispatcher (a replay is not an emit). */
    private readonly nudge: () => void,
    private readonly deliver: WebhookSend,
  ) {}

  private async webhookUrl(ctx: RequestContext): Promise<string | null> {
    const platform = await this.services.data.one(
      q.selectFrom("Platform").select("webhookUrl").where("id", "=", ctx.platformId),
    );
    return platform?.webhookUrl ?? null;
  }

  /**
   * Sends a TEST event to the webhook endpoint now, signed like every event,
   * and answers what the endpoint answered. The event and its one attempt
   * are kept in the event log, like any delivery.
   */
  async sendTest(ctx: RequestContext): Promise<TestWebhookResponse> {
    const platform = await this.services.data.one(
      q
        .selectFrom("Platform")
        .select(["webhookUrl", "webhookPrivateKey"])
        .where("id", "=", ctx.platformId),
    );
    const url = platform?.webhookUrl;
    if (!platform || !url) throw endpointNotSet();
    const now = ctx.clock.now();
    const id = newId("Webhook");
    const event = outboxRow({
      id,
      platformId: ctx.platformId,
      type: "TEST",
      // Each test event is its own object: it never waits behind another.
      objectId: id,
      data: { message: "Webhook test from the Payments Platform sandbox" },
      at: now,
    });
    const { outcome, latencyMs } = await this.deliver(
      url,
      event.payload,
      platform.webhookPrivateKey,
    );
    const delivered = outcome.kind === "response" && outcome.httpStatus < 300;
    await this.services.data.transaction(function* () {
      yield* insert("WebhookEvent", {
        ...event,
        status: delivered ? "DELIVERED" : "FAILED",
        attemptCount: 1,
        firstAttemptAt: event.nextAttemptAt,
        deliveredAt: delivered ? now : null,
      });
      yield* insert("WebhookAttempt", {
        id: randomUUID(),
        eventId: event.id,
        attemptedAt: now,
        httpStatus: outcome.kind === "response" ? outcome.httpStatus : null,
        latencyMs,
        error: outcome.kind === "response" ? null : outcome.error,
      });
    });
    if (outcome.kind !== "response") {
      throw new ApiError(
        400,
        "WEBHOOK_DELIVERY_ERROR",
        `The test webhook to ${url} failed: ${outcome.error}`,
        {
          details: { url, eventId: event.id },
        },
      );
    }
    return { url, response_status: outcome.httpStatus, response_body: outcome.body ?? "" };
  }

  async list(ctx: RequestContext, filter: WebhookEventFilter): Promise<Page<WebhookEventRecord>> {
    const { data } = this.services;
    let query = q.selectFrom("WebhookEvent").selectAll().where("platformId", "=", ctx.platformId);
    if (filter.type) query = query.where("type", "=", filter.type);
    if (filter.objectId) query = query.where("objectId", "=", filter.objectId);
    const rows = await data.all(query.$call(newestPage(decodeCursor(filter.cursor), filter.limit)));
    const page = rows.slice(0, filter.limit);
    const attempts =
      page.length === 0
        ? []
        : await data.all(
            q
              .selectFrom("WebhookAttempt")
              .selectAll()
              .where(
                "eventId",
                "in",
                page.map((r) => r.id),
              )
              .orderBy("attemptedAt")
              .orderBy("id"),
          );
    const byEvent = new Map<string, Attempt[]>();
    for (const a of attempts) {
      const list = byEvent.get(a.eventId) ?? [];
      list.push(toAttempt(a));
      byEvent.set(a.eventId, list);
    }
    const hasEndpoint = (await this.webhookUrl(ctx)) !== null;
    return toPage(rows, filter.limit, (row) => ({
      id: row.id,
      type: row.type as WebhookEventRecord["type"],
      objectId: row.objectId,
      createdAt: row.createdAt.toISOString(),
      deliveryStatus: deliveryStatus(row, hasEndpoint),
      attempts: byEvent.get(row.id) ?? [],
      payload: JSON.parse(row.payload) as WebhookEventRecord["payload"],
    }));
  }

  /**
   * Sends a recorded event again with the same envelope (same id): a new
   * delivery round with its own retries, recorded after the earlier attempts.
   */
  async replay(ctx: RequestContext, eventId: string): Promise<WebhookDeliveryAccepted> {
    const { data } = this.services;
    const event = await data.one(
      q
        .selectFrom("WebhookEvent")
        .select("id")
        .where("id", "=", eventId)
        .where("platformId", "=", ctx.platformId),
    );
    if (!event) throw notFound("REFERENCE_NOT_FOUND", `Webhook event ${eventId} not found`);
    if (!(await this.webhookUrl(ctx))) throw endpointNotSet();
    // The lease is left alone: an attempt in flight finishes, sees the new
    // round (replayCount) and leaves the event due for the replay.
    await data.execute(
      q
        .updateTable("WebhookEvent")
        .set((eb) => ({
          status: "PENDING",
          nextAttemptAt: this.services.clock.now(),
          firstAttemptAt: null,
          attemptCount: 0,
          deliveredAt: null,
          replayCount: eb("replayCount", "+", 1),
        }))
        .where("id", "=", event.id)
        .where("platformId", "=", ctx.platformId),
    );
    this.nudge();
    return { eventId: event.id };
  }
}
