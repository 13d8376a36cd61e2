import { OperationRoutes } from "../../http/operations.js";
import { bodyOf, contextOf } from "../../http/context.js";
import type { SandboxClockService } from "./service.js";

/** Sandbox only: read and advance the platform's sandbox clock. */
export function sandboxClockRoutes(clock: SandboxClockService): OperationRoutes {
  const router = new OperationRoutes();
  router.get("/sandbox/clock", async (_req, res) => {
    res.json(await clock.get(contextOf(res)));
  });
  router.post("/sandbox/clock/advance", async (req, res) => {
    const { seconds } = bodyOf<{ seconds: number }>(req);
    res.json(await clock.advance(contextOf(res), seconds));
  });
  return router;
}
