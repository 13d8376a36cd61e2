import type { NextFunction, Request, Response } from "express";
import type { PlatformClocks } from "../platform/platform-clock.js";
import { callerOf, type RequestContext } from "./context.js";

// API handlers are found by the operation express-openapi-validator matched
// (req.openapi.expressRoute), in one map lookup. Express's router would walk
// every area's routes, in order, matching each path pattern again: on the
// card-authorization hot path that walk cost as much as all of request
// validation. Pages outside the API still use Express routers.

export type OperationHandler = (req: Request, res: Response) => unknown;

export interface OperationOptions {
  /**
   * The handler reads the platform's sandbox clock itself, with data it
   * reads anyway (callerOf instead of contextOf): one read fewer on a hot
   * path. Otherwise the dispatcher reads it and the handler gets contextOf.
   */
  readsClockItself?: boolean;
}

interface Operation {
  handler: OperationHandler;
  readsClockItself: boolean;
}

/** One API area's handlers, by method and path as in openapi.yaml (Express `:param` syntax). */
export class OperationRoutes {
  readonly handlers = new Map<string, Operation>();

  get(path: string, handler: OperationHandler, options?: OperationOptions): this {
    return this.add("GET", path, handler, options);
  }
  post(path: string, handler: OperationHandler, options?: OperationOptions): this {
    return this.add("POST", path, handler, options);
  }
  patch(path: string, handler: OperationHandler, options?: OperationOptions): this {
    return this.add("PATCH", path, handler, options);
  }
  put(path: string, handler: OperationHandler, options?: OperationOptions): this {
    return this.add("PUT", path, handler, options);
  }
  delete(path: string, handler: OperationHandler, options?: OperationOptions): this {
    return this.add("DELETE", path, handler, options);
  }

  private add(
    method: string,
    path: string,
    handler: OperationHandler,
    options: OperationOptions = {},
  ): this {
    const key = `${method} ${path}`;
    if (this.handlers.has(key)) throw new Error(`two handlers for ${key}`);
    this.handlers.set(key, { handler, readsClockItself: options.readsClockItself ?? false });
    return this;
  }
}

/** What the validator leaves on a request it matched to an operation. */
interface MatchedOperation {
  expressRoute?: string;
  /** Path parameters, decoded (and validated). */
  pathParams?: Record<string, string>;
}

function matchedOperation(req: Request): MatchedOperation | undefined {
  return (req as { openapi?: MatchedOperation }).openapi;
}

/**
 * Middleware, mounted after the validator, that runs the handler of the
 * operation it matched; requests with no handler go on to `next`. It gives
 * the handler its RequestContext: the authenticated caller with the
 * platform's sandbox clock, read now that the request is known to be valid.
 */
export function operationDispatcher(
  areas: readonly OperationRoutes[],
  basePath: string,
  clocks: PlatformClocks,
) {
  const table = new Map<string, Operation>();
  for (const area of areas) {
    for (const [key, entry] of area.handlers) {
      if (table.has(key)) throw new Error(`two areas handle ${key}`);
      table.set(key, entry);
    }
  }
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const operation = matchedOperation(req);
    const route = operation?.expressRoute;
    const relative = route?.startsWith(basePath) ? route.slice(basePath.length) : route;
    const entry = relative === undefined ? undefined : table.get(`${req.method} ${relative}`);
    if (entry === undefined) {
      next();
      return;
    }
    // Express resets req.params for each middleware layer: give the handler
    // the parameters of the operation's own path.
    req.params = operation?.pathParams ?? {};
    if (!entry.readsClockItself) {
      const caller = callerOf(res);
      const ctx: RequestContext = { ...caller, clock: await clocks.forPlatform(caller.platformId) };
      res.locals.ctx = ctx;
    }
    await entry.handler(req, res);
  };
}
