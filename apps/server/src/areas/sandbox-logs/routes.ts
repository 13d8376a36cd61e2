import type { Handlers } from "../../http/operations.js";
import type { RequestLog } from "./request-log.js";

/** Sandbox only: the platform's recent API requests. */
export function sandboxLogRoutes(log: RequestLog): Handlers<"listSandboxRequestLogs"> {
  return {
    listSandboxRequestLogs: async ({ query }, ctx) => ({
      status: 200,
      body: log.list(ctx.platformId, {
        ...(query.after !== undefined ? { after: query.after } : {}),
        limit: query.limit,
      }),
    }),
  };
}
