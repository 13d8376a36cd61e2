import type { NextFunction, Request, Response } from "express";
import type { Schemas } from "@payments-sandbox/client";
import type { ApiError } from "../errors.js";

/** One answered API request, as the sandbox's request log keeps it (without its sequence). */
export type RecordedRequest = Omit<Schemas["SandboxRequestLogEntry"], "sequence">;

/**
 * Where answered requests go: the sandbox's request log
 * (areas/sandbox-logs/request-log.ts), handed to the app by the server.
 */
export interface RequestRecorder {
  record(platformId: string, entry: RecordedRequest): void;
}

/** The path of the request log's own operation, whose polls it does not list. */
const REQUEST_LOG_PATH = "/sandbox/logs/requests";

/**
 * Adds each API request of a known platform to the sandbox's request log
 * once its answer is sent: what identifies it and its outcome, nothing it
 * carried (see RequestLog).
 */
export function recordRequests(recorder: RequestRecorder, logPath: (path: string) => string) {
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.path === REQUEST_LOG_PATH) return next();
    const arrived = new Date();
    const started = performance.now();
    // Read now: Express puts the mount path back into req.url by the time an
    // error handler outside the mount answers.
    const path = logPath(req.originalUrl.split("?")[0] ?? "");
    res.once("finish", () => {
      const caller = res.locals.caller as { platformId: string } | undefined;
      if (caller === undefined) return;
      const apiError = res.locals.apiError as ApiError | undefined;
      recorder.record(caller.platformId, {
        time: arrived.toISOString(),
        method: req.method,
        path,
        status: res.statusCode,
        latencyMs: Math.round((performance.now() - started) * 10) / 10,
        requestId: res.locals.traceId as string,
        ...(apiError
          ? {
              error: {
                code: apiError.code,
                message: apiError.message,
                ...(apiError.reason !== undefined ? { reason: apiError.reason } : {}),
              },
            }
          : {}),
      });
    });
    next();
  };
}
