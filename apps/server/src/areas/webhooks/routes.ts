import type { Handlers } from "../../http/operations.js";
import type { WebhookService } from "./service.js";

/** Sandbox webhook tools (x-sandbox-only in openapi.yaml). */
export function webhookRoutes(
  webhooks: WebhookService,
): Handlers<"sendTestWebhook" | "listWebhookEvents" | "replayWebhookEvent"> {
  return {
    sendTestWebhook: async (_input, ctx) => ({ status: 200, body: await webhooks.sendTest(ctx) }),
    listWebhookEvents: async ({ query }, ctx) => ({
      status: 200,
      body: await webhooks.list(ctx, query),
    }),
    replayWebhookEvent: async ({ params }, ctx) => ({
      status: 202,
      body: await webhooks.replay(ctx, params.eventId),
    }),
  };
}
