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

/** The outbox row of an event (shared by emitEvent and the SQL hot paths). */
export function outboxRow(event: EventInput) {
  const id = newId("Webhook");
  const envelope = { id, type: event.type, timestamp: event.at.toISOString(), data: event.data };
  return {
    id,
    platformId: event.platformId,
    type: event.type,
    objectId: event.objectId,
    payload: JSON.stringify(envelope),
    createdAt: event.at,
    status: "PENDING",
    // Real time: the dispatcher compares against the real clock.
    nextAttemptAt: new Date(),
  };
}

/**
 * Records a webhook event in the outbox. Call it inside the transaction that
 * makes the state change, so neither exists without the other.
 */
export async function emitEvent(tx: Tx, event: EventInput): Promise<string> {
  const data = outboxRow(event);
  await tx.webhookEvent.create({ data });
  return data.id;
}
