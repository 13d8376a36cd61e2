import { OperationRoutes } from "../../http/operations.js";
import { bodyOf, contextOf } from "../../http/context.js";
import type { PlatformConfigUpdate, PlatformService } from "./service.js";

export function platformRoutes(platform: PlatformService): OperationRoutes {
  const router = new OperationRoutes();
  router.get("/config", async (_req, res) => {
    res.json(await platform.get(contextOf(res)));
  });
  router.patch("/config", async (req, res) => {
    res.json(await platform.update(contextOf(res), bodyOf<PlatformConfigUpdate>(req)));
  });
  return router;
}
