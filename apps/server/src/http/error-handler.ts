import type { NextFunction, Request, Response } from "express";
import { ApiError, fieldError } from "../errors.js";
import type { Logger } from "../logger.js";

interface ValidatorIssue {
  path?: string;
  message?: string;
  errorCode?: string;
}

interface HttpishError {
  status?: number;
  statusCode?: number;
  type?: string;
  errors?: ValidatorIssue[];
  message?: string;
}

/** Turns anything thrown into the spec's Error object; the only place that does. */
export function toApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as HttpishError;
  const status = e.status ?? e.statusCode;

  // body-parser: malformed JSON, wrong charset, oversized body.
  if (e.type === "entity.parse.failed") {
    return new ApiError(400, "INVALID_INPUT", "Request body is not valid JSON", {
      details: { errors: [fieldError("body", e.message ?? "parse error")] },
    });
  }
  if (e.type === "entity.too.large") {
    return new ApiError(400, "INVALID_INPUT", "Request body is too large");
  }
  if (e.type !== undefined && status !== undefined && status >= 400 && status < 500) {
    return new ApiError(400, "INVALID_INPUT", e.message ?? "Malformed request");
  }

  // express-openapi-validator request errors carry `errors`.
  if (Array.isArray(e.errors) && status !== undefined && status < 500) {
    if (status === 404) {
      return new ApiError(404, "NOT_FOUND", "No such operation: check the method and path");
    }
    // The credentials were valid (the authenticator ran first) but this
    // operation's `security` does not list their scheme.
    if (status === 401 || status === 403) {
      return new ApiError(
        401,
        "UNAUTHORIZED",
        "These credentials are not accepted here: agent tokens (AgentAuth) work only on agent-scoped operations",
        { reason: "Credentials of a scheme this operation does not accept" },
      );
    }
    const errors = e.errors.map((issue) =>
      fieldError(
        (issue.path ?? "").replace(/^\//, "").replace(/\//g, "."),
        issue.message ?? "invalid",
      ),
    );
    const first = errors[0];
    const summary = first ? `${first.field}: ${first.message}` : "Invalid request";
    return new ApiError(400, "INVALID_INPUT", `Invalid request: ${summary}`, {
      details: { errors },
    });
  }
  return undefined;
}

/**
 * @param logPath rewrites a path before it is logged (the access log's rule:
 * secrets carried in paths never reach the logs).
 */
export function errorHandler(log: Logger, logPath: (path: string) => string) {
  // Express recognises error handlers by their four parameters.
  return (err: unknown, req: Request, res: Response, _next: NextFunction): void => {
    let apiError = toApiError(err);
    if (!apiError) {
      // Response-validation failures land here too: a contract bug, logged in full.
      log.error(
        { err, traceId: res.locals.traceId, method: req.method, path: logPath(req.path) },
        "unexpected error",
      );
      apiError = new ApiError(
        500,
        "INTERNAL_ERROR",
        "Internal error; the trace id in X-Trace-Id identifies it in the logs",
      );
    } else if (apiError.status >= 500) {
      log.error({ err, traceId: res.locals.traceId }, "server error");
    }
    // The access log shows why a request was refused (http/app.ts).
    res.locals.errorCode = apiError.code;
    if (res.headersSent) {
      res.end();
      return;
    }
    for (const [name, value] of Object.entries(apiError.headers)) res.setHeader(name, value);
    res.status(apiError.status).json(apiError.toBody());
  };
}
