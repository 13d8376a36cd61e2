import type { Request } from "express";

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
