import type { Request } from "express";

/** A path parameter of a page route (outside the API) that the router guarantees is present. */
export function param(req: Request, name: string): string {
  const value = req.params[name];
  if (typeof value !== "string") throw new Error(`route has no :${name} parameter`);
  return value;
}
