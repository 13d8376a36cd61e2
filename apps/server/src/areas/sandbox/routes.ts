import { Router } from "express";
import { bodyOf, contextOf } from "../../http/context.js";
import { param } from "../../http/route-helpers.js";
import type { InternalAccountService } from "../internal-accounts/service.js";

/** Sandbox-only helpers (x-sandbox-only in openapi.yaml). */
export function sandboxRoutes(accounts: InternalAccountService): Router {
  const router = Router();
  router.post("/sandbox/internal-accounts/:accountId/fund", async (req, res) => {
    const { amount } = bodyOf<{ amount: number }>(req);
    res.json(await accounts.fund(contextOf(res), param(req, "accountId"), amount));
  });
  return router;
}
