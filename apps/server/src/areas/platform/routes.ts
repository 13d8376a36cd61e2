import { Router } from "express";
import { bodyOf, contextOf } from "../../http/context.js";
import type { PlatformConfigUpdate, PlatformService } from "./service.js";

export function platformRoutes(platform: PlatformService): Router {
  const router = Router();
  router.get("/config", async (_req, res) => {
    res.json(await platform.get(contextOf(res)));
  });
  router.patch("/config", async (req, res) => {
    res.json(await platform.update(contextOf(res), bodyOf<PlatformConfigUpdate>(req)));
  });
  return router;
}
