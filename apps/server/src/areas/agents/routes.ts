import type { Handlers } from "../../http/operations.js";
import type { AgentService } from "./service.js";

// The device code in these paths is a one-time credential: logs show the
// path without it, whatever the outcome of the request.
const DEVICE_CODE_PATH = /(\/agents\/device-codes\/)[^/]+/;

export function withoutDeviceCode(path: string): string {
  return path.replace(DEVICE_CODE_PATH, "$1[code]");
}

/** The platform's side of agents (BasicAuth): create, connect, manage, and decide their actions. */
export function agentRoutes(
  agents: AgentService,
): Handlers<
  | "createAgent"
  | "listAgents"
  | "getAgentById"
  | "updateAgent"
  | "deleteAgent"
  | "updateAgentPolicy"
  | "regenerateAgentDeviceCode"
  | "getAgentDeviceCodeStatus"
  | "redeemAgentDeviceCode"
  | "listAgentApprovals"
  | "approveAgentAction"
  | "rejectAgentAction"
> {
  return {
    createAgent: async ({ body }, ctx) => ({ status: 201, body: await agents.create(ctx, body) }),
    listAgents: async ({ query }, ctx) => ({ status: 200, body: await agents.list(ctx, query) }),
    getAgentById: async ({ params }, ctx) => ({
      status: 200,
      body: await agents.get(ctx, params.agentId),
    }),
    updateAgent: async ({ params, body }, ctx) => ({
      status: 200,
      body: await agents.update(ctx, params.agentId, body),
    }),
    deleteAgent: async ({ params }, ctx) => {
      await agents.delete(ctx, params.agentId);
      return { status: 204 };
    },
    updateAgentPolicy: async ({ params, body }, ctx) => ({
      status: 200,
      body: await agents.updatePolicy(ctx, params.agentId, body),
    }),
    regenerateAgentDeviceCode: async ({ params }, ctx) => ({
      status: 201,
      body: await agents.regenerateCode(ctx, params.agentId),
    }),
    getAgentDeviceCodeStatus: async ({ params }, ctx) => ({
      status: 200,
      body: await agents.codeStatus(ctx, params.code),
    }),
    // No credentials: the device code in the path is the caller's only proof.
    redeemAgentDeviceCode: async ({ params }) => ({
      status: 200,
      body: await agents.redeem(params.code),
    }),
    listAgentApprovals: async ({ query }, ctx) => ({
      status: 200,
      body: await agents.approvals(ctx, query),
    }),
    approveAgentAction: async ({ params }, ctx) => ({
      status: 200,
      body: await agents.approve(ctx, params.agentId, params.actionId),
    }),
    rejectAgentAction: async ({ params, body }, ctx) => ({
      status: 200,
      body: await agents.reject(ctx, params.agentId, params.actionId, body?.reason),
    }),
  };
}
