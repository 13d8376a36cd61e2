import type { NextFunction, Request, Response } from "express";
import { ApiError, fieldError, type FieldError } from "../errors.js";
import type { Logger } from "../logger.js";
import { nearest, type RequestFields } from "./request-fields.js";

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

/**
 * One validator issue as a FieldError that says how to fix it: the field as
 * the request names it, the allowed values, the known field nearest to an
 * unknown one. `known` lists the operation's fields (operation-router.ts).
 */
function describeIssue(issue: ValidatorIssue, known: RequestFields | undefined): FieldError {
  const path = issue.path ?? "";
  const message = issue.message ?? "invalid";
  // A top-level discriminator's issue carries the request path, and names
  // its property in the message: "'customerType' must be equal to one of …".
  const discriminator = /^'([^']+)' (must be equal to one of the allowed values: .*)$/.exec(
    message,
  );
  if (discriminator) return { field: discriminator[1]!, message: discriminator[2]! };
  // The body's media type, checked before anything in it.
  if (/^unsupported media type/.test(message)) {
    return {
      field: "Content-Type",
      message: `${message}: send the body as JSON with the header Content-Type: application/json`,
    };
  }
  const location = path.replace(/^\//, "").replace(/\//g, ".");
  const unknownQuery = /^Unknown query parameter '([^']*)'$/.exec(message);
  if (unknownQuery) {
    const name = unknownQuery[1]!;
    return fieldError(location, unknownName("query parameter", name, known?.query ?? []));
  }
  if (
    issue.errorCode === "unevaluatedProperties.openapi.validation" ||
    issue.errorCode === "additionalProperties.openapi.validation"
  ) {
    // The validator's path ends with the unknown property itself.
    const parts = location.replace(/^body(\.|$)/, "").split(".");
    const name = parts.pop() ?? "";
    return fieldError(location, unknownName("field", name, known?.body(parts.join(".")) ?? []));
  }
  return fieldError(location, message);
}

/** "unknown field `fulName`; did you mean `fullName`?", or the known names when none is close. */
function unknownName(kind: string, name: string, known: readonly string[]): string {
  const guess = nearest(name, known);
  if (guess !== undefined) return `unknown ${kind} \`${name}\`; did you mean \`${guess}\`?`;
  return known.length > 0
    ? `unknown ${kind} \`${name}\`; known: ${known.map((k) => `\`${k}\``).join(", ")}`
    : `unknown ${kind} \`${name}\``;
}

/** Turns anything thrown into the spec's Error object; the only place that does. */
export function toApiError(err: unknown, known?: RequestFields): ApiError | undefined {
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
    const errors = e.errors.map((issue) => describeIssue(issue, known));
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
    let apiError = toApiError(err, res.locals.requestFields as RequestFields | undefined);
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
    // The access log shows why a request was refused (http/app.ts), and the
    // sandbox's request log (`logs tail`) says it in words too.
    res.locals.errorCode = apiError.code;
    res.locals.apiError = apiError;
    if (res.headersSent) {
      res.end();
      return;
    }
    for (const [name, value] of Object.entries(apiError.headers)) res.setHeader(name, value);
    res.status(apiError.status).json(apiError.toBody());
  };
}
