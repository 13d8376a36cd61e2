import type { Schemas } from "@sandbox/client";
import type { Tx } from "../db/client.js";
import { newId } from "../ids.js";

export type WebhookEventType = Schemas["WebhookEventType"];

export interface EventInput {
  platformId: string;
  type: WebhookEventType;
  /** The id of the object the event is about (delivery order is per object). */
  objectId: string;
  /** The envelope's `data`: the whole object as the API returns it. */
  data: unknown;
  /** Platform (sandbox clock) time of the change. */
  at: Date;
}

/**
 * Records a webhook event in the outbox. Call it inside the transaction that
 * makes the state change, so neither exists without the other.
 */
export async function emitEvent(tx: Tx, event: EventInput): Promise<string> {
  const id = newId("Webhook");
  const envelope = { id, type: event.type, timestamp: event.at.toISOString(), data: event.data };
  await tx.webhookEvent.create({
    data: {
      id,
      platformId: event.platformId,
      type: event.type,
      objectId: event.objectId,
      payload: JSON.stringify(envelope),
      createdAt: event.at,
      status: "PENDING",
      // Real time: the dispatcher compares against the real clock.
      nextAttemptAt: new Date(),
    },
  });
  return id;
}
