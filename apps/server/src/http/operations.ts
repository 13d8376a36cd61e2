import type { NextFunction, Request, Response } from "express";

// API handlers are found by the operation express-openapi-validator matched
// (req.openapi.expressRoute), in one map lookup. Express's router would walk
// every area's routes, in order, matching each path pattern again: on the
// card-authorization hot path that walk cost as much as all of request
// validation. Pages outside the API still use Express routers.

export type OperationHandler = (req: Request, res: Response) => unknown;

/** One API area's handlers, by method and path as in openapi.yaml (Express `:param` syntax). */
export class OperationRoutes {
  readonly handlers = new Map<string, OperationHandler>();

  get(path: string, handler: OperationHandler): this {
    return this.add("GET", path, handler);
  }
  post(path: string, handler: OperationHandler): this {
    return this.add("POST", path, handler);
  }
  patch(path: string, handler: OperationHandler): this {
    return this.add("PATCH", path, handler);
  }
  put(path: string, handler: OperationHandler): this {
    return this.add("PUT", path, handler);
  }
  delete(path: string, handler: OperationHandler): this {
    return this.add("DELETE", path, handler);
  }

  private add(method: string, path: string, handler: OperationHandler): this {
    const key = `${method} ${path}`;
    if (this.handlers.has(key)) throw new Error(`two handlers for ${key}`);
    this.handlers.set(key, handler);
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
 * operation it matched; requests with no handler go on to `next`.
 */
export function operationDispatcher(areas: readonly OperationRoutes[], basePath: string) {
  const table = new Map<string, OperationHandler>();
  for (const area of areas) {
    for (const [key, handler] of area.handlers) {
      if (table.has(key)) throw new Error(`two areas handle ${key}`);
      table.set(key, handler);
    }
  }
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const operation = matchedOperation(req);
    const route = operation?.expressRoute;
    const relative = route?.startsWith(basePath) ? route.slice(basePath.length) : route;
    const handler = relative === undefined ? undefined : table.get(`${req.method} ${relative}`);
    if (handler === undefined) {
      next();
      return;
    }
    // Express resets req.params for each middleware layer: give the handler
    // the parameters of the operation's own path.
    req.params = operation?.pathParams ?? {};
    await handler(req, res);
  };
}
