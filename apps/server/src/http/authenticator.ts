import type { NextFunction, Request, Response } from "express";
import { rejected } from "../errors.js";
import type { ApiTokenVerifier } from "../platform/api-tokens.js";
import type { Logger } from "../logger.js";
import type { PlatformClocks } from "../platform/platform-clock.js";
import type { Clock } from "../clock.js";
import type { AgentPrincipal, PublicContext, RequestContext } from "./context.js";

const BASIC_HOWTO =
  "API tokens use HTTP Basic auth: send `Authorization: Basic base64(<token id>:<secret>)`";

/**
 * How every agent access token starts (an API secret never does): here, so
 * that a Bearer value without it is answered as the common mistake it is.
 */
export const AGENT_TOKEN_PREFIX = "agt_";

/** Resolves an agent access token (AgentAuth); undefined when unknown or expired. */
export interface AgentTokenVerifier {
  verify(
    accessToken: string,
    clocks: PlatformClocks,
  ): Promise<{ platformId: string; agent: AgentPrincipal; clock: Clock } | undefined>;
}

/**
 * Checks the credentials of every API request before validation, so a caller
 * without valid credentials learns nothing about the request: HTTP Basic
 * (`<api token id>:<api client secret>`) or an agent's bearer token. Which
 * operations accept which scheme is openapi.yaml's `security`, enforced after
 * the route is matched by {@link securityHandlers}. It leaves the handler's
 * RequestContext, with the platform's clock read in the same query as the token.
 *
 * An operation whose `security` is empty (`isPublic`) needs no credentials:
 * its Authorization header, if any, is not read (its handler acts on
 * nothing but its own input), and the handler gets a PublicContext.
 */
export function authenticator(
  verifier: ApiTokenVerifier,
  agents: AgentTokenVerifier,
  clocks: PlatformClocks,
  log: Logger,
  isPublic: (method: string, path: string) => boolean,
) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    if (isPublic(req.method, req.path)) {
      const context: PublicContext = {
        log: lazyChild(log, { traceId: res.locals.traceId }),
      };
      res.locals.publicContext = context;
      next();
      return;
    }
    const header = req.headers.authorization;
    if (!header)
      throw rejected(
        "Missing Authorization header: use HTTP Basic with your API token id and secret",
        "Authorization header absent",
      );
    const [scheme, encoded] = header.split(" ", 2);
    const kind = scheme?.toLowerCase();
    if ((kind !== "basic" && kind !== "bearer") || !encoded) {
      throw rejected(
        "Unsupported authorization scheme: use HTTP Basic (or Bearer for agents)",
        "Authorization scheme is neither Basic nor Bearer",
      );
    }
    let caller: RequestContext;
    if (kind === "bearer") {
      const identity = await agents.verify(encoded, clocks);
      if (!identity) {
        // An API secret sent as a bearer token is a common first mistake.
        throw encoded.startsWith(AGENT_TOKEN_PREFIX)
          ? rejected(
              "Invalid or expired agent access token",
              "Agent access token unknown or expired",
            )
          : rejected(
              `This Bearer value is not an agent access token. ${BASIC_HOWTO}; Bearer is only for agent access tokens (${AGENT_TOKEN_PREFIX}…)`,
              "Bearer credentials are not an agent access token",
            );
      }
      caller = {
        platformId: identity.platformId,
        tokenId: identity.agent.agentId,
        agent: identity.agent,
        clock: identity.clock,
        log: lazyChild(log, {
          traceId: res.locals.traceId,
          platformId: identity.platformId,
          agentId: identity.agent.agentId,
        }),
      };
    } else {
      const decoded = Buffer.from(encoded, "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      if (colon <= 0) {
        throw rejected(
          "Malformed Basic credentials: expected <token id>:<secret>",
          "Basic credentials have no <token id>:<secret>",
        );
      }
      const identity = await verifier.verify(decoded.slice(0, colon), decoded.slice(colon + 1));
      if (!identity)
        throw rejected("Invalid API token id or secret", "API token id or secret unknown");
      caller = {
        platformId: identity.platformId,
        tokenId: identity.tokenId,
        permissions: identity.permissions,
        clock: clocks.withOffset(identity.clockOffsetSeconds),
        log: lazyChild(log, { traceId: res.locals.traceId, platformId: identity.platformId }),
      };
    }
    res.locals.caller = caller;
    next();
  };
}

/**
 * The request's logger, made on first use: most requests log nothing, and a
 * pino child logger (with its redaction set-up) costs more per request than
 * the rest of authentication. Only `child` is deferred; the methods call
 * through to the child once it exists.
 */
function lazyChild(parent: Logger, bindings: Record<string, unknown>): Logger {
  let child: Logger | undefined;
  return new Proxy(parent, {
    get(_target, property) {
      child ??= parent.child(bindings);
      const value = Reflect.get(child, property, child) as unknown;
      return typeof value === "function" ? (value as () => unknown).bind(child) : value;
    },
  });
}

function callerOf(req: Request): RequestContext | undefined {
  return req.res?.locals.caller as RequestContext | undefined;
}

/**
 * express-openapi-validator security handlers: the credentials were verified
 * above; here each operation's `security` decides which kind it accepts, so
 * an agent token works only where openapi.yaml lists AgentAuth.
 */
export const securityHandlers = {
  BasicAuth: (req: Request) => {
    const ctx = callerOf(req);
    return ctx !== undefined && ctx.agent === undefined;
  },
  AgentAuth: (req: Request) => callerOf(req)?.agent !== undefined,
};
