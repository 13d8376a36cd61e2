import type { RequestHandler } from "express";

/** One answer of the versioned API, as a test that checks answers sees it. */
export interface ApiAnswer {
  method: string;
  /** The request path under the API's base path, without the query. */
  path: string;
  status: number;
  /** The JSON body, if the answer had one. */
  body?: unknown;
}

/**
 * Reports every answer of the API once it is sent (tests use it to check
 * answers against another contract). The body is taken as the handler or the
 * error middleware gives it to `res.json`, on this response only.
 */
export function answerObserver(observe: (answer: ApiAnswer) => void): RequestHandler {
  return (req, res, next) => {
    const path = req.path;
    let body: { value: unknown } | undefined;
    const json = res.json.bind(res);
    res.json = (value: unknown) => {
      body ??= { value };
      return json(value);
    };
    res.on("finish", () => {
      observe({
        method: req.method,
        path,
        status: res.statusCode,
        ...(body ? { body: body.value } : {}),
      });
    });
    next();
  };
}
