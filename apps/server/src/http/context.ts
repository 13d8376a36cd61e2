import type { Response } from "express";
import type { Logger } from "../logger.js";
import type { Clock } from "../clock.js";
import type { SelectQueryBuilder } from "kysely";
import type { Database } from "../db/database.js";
import type { Schemas } from "@payments-sandbox/client";
import type { Permission } from "../platform/api-tokens.js";

/** An agent acting with an AgentAuth bearer token: bound to one customer and its policy. */
export interface AgentPrincipal {
  agentId: string;
  customerId: string;
  /** Paused by the platform: refused on everything but GET /agents/me. */
  isPaused: boolean;
  /** As the platform set it; checked on every request (areas/agents/policy.ts). */
  policy: Schemas["AgentPolicy"];
}

/** What a handler knows about the caller: always a platform, and an agent when one is acting. */
export interface RequestContext {
  platformId: string;
  /** The API token id (BasicAuth), or the agent id (AgentAuth). */
  tokenId: string;
  /**
   * The API token's permissions (BasicAuth), checked by http/permissions.ts.
   * Absent for an agent, whose policy decides what it may do.
   */
  permissions?: readonly Permission[];
  /** Present when the request carries an agent's bearer token. */
  agent?: AgentPrincipal;
  /** The platform's sandbox clock: read business time from here. */
  clock: Clock;
  log: Logger;
}

/**
 * What the handler of an operation with `security: []` knows: no caller at
 * all, whatever Authorization header came (it is not read).
 */
export interface PublicContext {
  log: Logger;
}

/**
 * Narrows a statement to the rows this caller may see: its platform's, and
 * only its customer's when an agent is acting. For any table with
 * `platformId` and `customerId`: `q.selectFrom(...).$call(scopedTo(ctx))`.
 */
export function scopedTo(ctx: RequestContext) {
  // The builder's table is not known here; the columns exist on every table
  // this is applied to (a wrong table fails at the first query of any test).
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return <QB extends SelectQueryBuilder<any, any, any>>(qb: QB): QB => {
    const own = qb.where("platformId", "=", ctx.platformId);
    return (ctx.agent ? own.where("customerId", "=", ctx.agent.customerId) : own) as QB;
  };
}

export interface Services {
  data: Database;
  /** Real time; request handling uses RequestContext.clock instead. */
  clock: Clock;
  log: Logger;
}

/**
 * The authenticated caller, as the authenticator left it for the dispatcher,
 * with its platform's clock (read with the credentials, in the same query).
 */
export function callerOf(res: Response): RequestContext {
  const caller = res.locals.caller as RequestContext | undefined;
  if (!caller) throw new Error("request reached a handler without authentication");
  return caller;
}

/** The context of a request to an operation without security, as the authenticator left it. */
export function publicContextOf(res: Response): PublicContext {
  const context = res.locals.publicContext as PublicContext | undefined;
  if (!context) throw new Error("request reached a public handler on an authenticated route");
  return context;
}
