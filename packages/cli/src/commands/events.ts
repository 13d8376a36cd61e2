import type { Schemas } from "@payments-sandbox/client";
import { ok, type CommandContext } from "../context.js";
import type { Output } from "../output.js";

type EventRecord = Schemas["WebhookEventRecord"];

/** One event and its delivery attempts, as a line for people. */
export function describeEvent(out: Output, event: EventRecord): string[] {
  const status =
    event.deliveryStatus === "DELIVERED" ? out.ok(event.deliveryStatus) : event.deliveryStatus;
  const lines = [`${event.id}  ${event.type}  ${event.objectId}  ${status}  ${event.createdAt}`];
  for (const attempt of event.attempts) {
    const answer = attempt.httpStatus ?? attempt.error ?? "no answer";
    lines.push(out.dim(`    attempt ${attempt.attemptedAt} → ${answer} (${attempt.latencyMs} ms)`));
  }
  return lines;
}

/**
 * `events list [--type T] [--object-id ID] [--limit N]`: the platform's
 * webhook event log (GET /sandbox/webhooks/events), newest first, with each
 * delivery attempt.
 */
export async function listEvents(
  { api, out }: CommandContext,
  options: { type?: string; objectId?: string; limit?: number },
): Promise<void> {
  const page = ok(
    "GET /sandbox/webhooks/events",
    await api.GET("/sandbox/webhooks/events", {
      params: {
        query: {
          // The sandbox checks the type against the contract's list (400 otherwise).
          ...(options.type !== undefined
            ? { type: options.type as Schemas["WebhookEventType"] }
            : {}),
          ...(options.objectId !== undefined ? { objectId: options.objectId } : {}),
          ...(options.limit !== undefined ? { limit: options.limit } : {}),
        },
      },
    }),
  );
  out.result(page, () =>
    page.data.length === 0
      ? ["No webhook events."]
      : [
          ...page.data.flatMap((event) => describeEvent(out, event)),
          ...(page.hasMore ? [out.dim("(more: raise --limit)")] : []),
        ],
  );
}

/** `events replay <eventId>`: delivers a recorded event again, same envelope and id. */
export async function replayEvent({ api, out }: CommandContext, eventId: string) {
  const accepted = ok(
    `POST /sandbox/webhooks/events/${eventId}/replay`,
    await api.POST("/sandbox/webhooks/events/{eventId}/replay", {
      params: { path: { eventId } },
    }),
  );
  out.result(accepted, () => [
    `${out.ok("✔")} Queued ${accepted.eventId} for delivery again; \`events list\` shows the attempts`,
  ]);
}
