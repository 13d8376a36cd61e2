import type { Handlers } from "../../http/operations.js";
import type { PlatformService } from "./service.js";

export function platformRoutes(
  platform: PlatformService,
): Handlers<"getPlatformConfig" | "updatePlatformConfig" | "getSandboxKeys"> {
  return {
    getPlatformConfig: async (_input, ctx) => ({ status: 200, body: await platform.get(ctx) }),
    updatePlatformConfig: async ({ body }, ctx) => ({
      status: 200,
      body: await platform.update(ctx, body),
    }),
    getSandboxKeys: async (_input, ctx) => ({ status: 200, body: await platform.keys(ctx) }),
  };
}
