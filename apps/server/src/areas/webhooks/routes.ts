import { OperationRoutes } from "../../http/operations.js";
import { contextOf } from "../../http/context.js";
import { param, query } from "../../http/route-helpers.js";
import type { WebhookEventFilter, WebhookService } from "./service.js";

/** Sandbox webhook tools (x-sandbox-only in openapi.yaml). */
export function webhookRoutes(webhooks: WebhookService): OperationRoutes {
  const router = new OperationRoutes();
  router.post("/sandbox/webhooks/test", async (_req, res) => {
    res.status(202).json(await webhooks.sendTest(contextOf(res)));
  });
  router.get("/sandbox/webhooks/events", async (req, res) => {
    res.json(await webhooks.list(contextOf(res), query<WebhookEventFilter>(req)));
  });
  router.post("/sandbox/webhooks/events/:eventId/replay", async (req, res) => {
    res.status(202).json(await webhooks.replay(contextOf(res), param(req, "eventId")));
  });
  return router;
}
