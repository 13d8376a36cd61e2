import { OperationRoutes } from "../../http/operations.js";
import { bodyOf, contextOf } from "../../http/context.js";
import { param } from "../../http/route-helpers.js";
import type { InternalAccountService } from "../internal-accounts/service.js";
import type { QuoteService, SandboxSendRequest } from "../quotes/service.js";
import type { SandboxUmaReceiveRequest, UmaReceiveService } from "./uma-receive.js";

/** Sandbox-only helpers (x-sandbox-only in openapi.yaml). */
export function sandboxRoutes(
  accounts: InternalAccountService,
  quotes: QuoteService,
  umaReceive: UmaReceiveService,
): OperationRoutes {
  const router = new OperationRoutes();
  router.post("/sandbox/internal-accounts/:accountId/fund", async (req, res) => {
    const { amount } = bodyOf<{ amount: number }>(req);
    res.json(await accounts.fund(contextOf(res), param(req, "accountId"), amount));
  });
  router.post("/sandbox/send", async (req, res) => {
    res.json(await quotes.fundRealtime(contextOf(res), bodyOf<SandboxSendRequest>(req)));
  });
  router.post("/sandbox/uma/receive", async (req, res) => {
    res
      .status(201)
      .json(await umaReceive.receive(contextOf(res), bodyOf<SandboxUmaReceiveRequest>(req)));
  });
  return router;
}
