import type { Handlers } from "../../http/operations.js";
import type { SandboxClockService } from "./service.js";

/** Sandbox only: read and advance the platform's sandbox clock. */
export function sandboxClockRoutes(
  clock: SandboxClockService,
): Handlers<"getSandboxClock" | "advanceSandboxClock"> {
  return {
    getSandboxClock: async (_input, ctx) => ({ status: 200, body: await clock.get(ctx) }),
    advanceSandboxClock: async ({ body }, ctx) => ({
      status: 200,
      body: await clock.advance(ctx, body.seconds),
    }),
  };
}
