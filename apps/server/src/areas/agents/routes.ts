import { OperationRoutes } from "../../http/operations.js";
import { bodyOf, contextOf } from "../../http/context.js";
import { param } from "../../http/route-helpers.js";
import type { AgentCreate, AgentService } from "./service.js";

// The device code in this path is a one-time credential: logs show the path
// without it, whatever the outcome of the redemption.
const DEVICE_CODE_PATH = /(\/agents\/device-codes\/)[^/]+/;

export function withoutDeviceCode(path: string): string {
  return path.replace(DEVICE_CODE_PATH, "$1[code]");
}

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
