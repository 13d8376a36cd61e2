import type { Request, Response } from "express";

/** A path parameter that the router guarantees is present. */
export function param(req: Request, name: string): string {
  const value = req.params[name];
  if (typeof value !== "string") throw new Error(`route has no :${name} parameter`);
  return value;
}

/** Query values after validation: strings, numbers or booleans, never arrays here. */
export function query<T>(req: Request): T {
  return req.query as unknown as T;
}

/** Writes a service result that chooses its status (e.g. 202 challenge or 201): no body for 204. */
export function send(res: Response, result: { status: number; body?: unknown }): void {
  if (result.body === undefined) res.status(result.status).end();
  else res.status(result.status).json(result.body);
}
