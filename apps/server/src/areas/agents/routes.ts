import { OperationRoutes } from "../../http/operations.js";
import { bodyOf, contextOf } from "../../http/context.js";
import { param } from "../../http/route-helpers.js";
import type { AgentCreate, AgentService } from "./service.js";

export function agentRoutes(agents: AgentService): OperationRoutes {
  const router = new OperationRoutes();
  router.post("/agents", async (req, res) => {
    res.status(201).json(await agents.create(contextOf(res), bodyOf<AgentCreate>(req)));
  });
  router.post("/agents/device-codes/:code/redeem", async (req, res) => {
    res.json(await agents.redeem(contextOf(res), param(req, "code")));
  });
  return router;
}
