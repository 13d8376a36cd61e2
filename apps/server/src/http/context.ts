import type { Request, Response } from "express";
import type { Logger } from "../logger.js";
import type { Clock } from "../clock.js";
import type { Db } from "../db/client.js";

/** What a handler knows about the caller: always a platform, never more. */
export interface RequestContext {
  platformId: string;
  tokenId: string;
  /** The platform's sandbox clock: read business time from here. */
  clock: Clock;
  log: Logger;
}

export interface Services {
  db: Db;
  /** Real time; request handling uses RequestContext.clock instead. */
  clock: Clock;
  log: Logger;
}

export function contextOf(res: Response): RequestContext {
  const ctx = res.locals.ctx as RequestContext | undefined;
  if (!ctx) throw new Error("request reached a handler without authentication");
  return ctx;
}

/** Request parts as express-openapi-validator left them: validated and coerced. */
export function bodyOf<T>(req: Request): T {
  return req.body as T;
}
