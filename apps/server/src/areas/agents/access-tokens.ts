import { sha256Hex } from "../../crypto/sha256.js";
import type { Clock } from "../../clock.js";
import { q } from "../../db/query.js";
import { AGENT_TOKEN_PREFIX } from "../../http/authenticator.js";
import type { AgentPrincipal, RequestContext, Services } from "../../http/context.js";
import type { PlatformClocks } from "../../platform/platform-clock.js";
import { policyOf, type AgentRow } from "./view.js";

// An agent's bearer token, issued when its device code is redeemed
// (device-codes.ts), stands for the agent until the agent is deleted. Only
// its hash is stored; every request re-reads the agent, so a pause or a new
// policy applies from the next request on.

// The prefix is the authenticator's, which names it in its answers.
export { AGENT_TOKEN_PREFIX };

function principalOf(row: AgentRow): AgentPrincipal {
  return {
    agentId: row.id,
    customerId: row.customerId,
    isPaused: row.isPaused,
    policy: policyOf(row),
  };
}

/** The calling agent; only AgentAuth operations call what needs it. */
export function agentOf(ctx: RequestContext): AgentPrincipal {
  if (!ctx.agent) throw new Error("an agent operation was called without an agent");
  return ctx.agent;
}

/** The agent an access token stands for, with its platform's clock; undefined for any other value. */
export async function verifyAccessToken(
  services: Services,
  accessToken: string,
  clocks: PlatformClocks,
): Promise<{ platformId: string; agent: AgentPrincipal; clock: Clock } | undefined> {
  if (!accessToken.startsWith(AGENT_TOKEN_PREFIX)) return undefined;
  const token = await services.data.one(
    q.selectFrom("AgentAccessToken").selectAll().where("tokenHash", "=", sha256Hex(accessToken)),
  );
  if (!token) return undefined;
  const clock = await clocks.forPlatform(token.platformId);
  // Tokens issued before tokens lasted as long as their agent keep their hour.
  if (token.expiresAt !== null && token.expiresAt <= clock.now()) return undefined;
  const agent = await services.data.one(
    q
      .selectFrom("Agent")
      .selectAll()
      .where("id", "=", token.agentId)
      .where("platformId", "=", token.platformId),
  );
  if (!agent) return undefined;
  return { platformId: agent.platformId, agent: principalOf(agent), clock };
}
