import type { Handlers } from "../../http/operations.js";
import type { SandboxPlatformService } from "./service.js";

/** Sandbox only: isolated platforms for parallel test runs. */
export function sandboxPlatformRoutes(
  platforms: SandboxPlatformService,
): Handlers<"createSandboxPlatform" | "deleteSandboxPlatform"> {
  return {
    createSandboxPlatform: async ({ body }, ctx) => ({
      status: 201,
      body: await platforms.create(ctx, body),
    }),
    deleteSandboxPlatform: async ({ params }, ctx) => {
      await platforms.delete(ctx, params.platformId);
      return { status: 204 };
    },
  };
}
