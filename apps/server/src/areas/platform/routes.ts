import { Router } from "express";
import { contextOf } from "../../http/context.js";
import type { PlatformService } from "./service.js";

export function platformRoutes(platform: PlatformService): Router {
  const router = Router();
  router.get("/config", async (_req, res) => {
    res.json(await platform.getConfig(contextOf(res)));
  });
  return router;
}
