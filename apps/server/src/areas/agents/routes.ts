import type { Handlers } from "../../http/operations.js";
import type { AgentService } from "./service.js";

// The device code in this path is a one-time credential: logs show the path
// without it, whatever the outcome of the redemption.
const DEVICE_CODE_PATH = /(\/agents\/device-codes\/)[^/]+/;

export function withoutDeviceCode(path: string): string {
  return path.replace(DEVICE_CODE_PATH, "$1[code]");
}

export function agentRoutes(
  agents: AgentService,
): Handlers<"createAgent" | "getAgentById" | "redeemAgentDeviceCode"> {
  return {
    createAgent: async ({ body }, ctx) => ({ status: 201, body: await agents.create(ctx, body) }),
    getAgentById: async ({ params }, ctx) => ({
      status: 200,
      body: await agents.get(ctx, params.agentId),
    }),
    // No credentials: the device code in the path is the caller's only proof.
    redeemAgentDeviceCode: async ({ params }) => ({
      status: 200,
      body: await agents.redeem(params.code),
    }),
  };
}
