import { isUtf8 } from "node:buffer";
import express, { type NextFunction, type Request, type Response } from "express";
import { findUnstorableString, unstorableStringError } from "./storable-strings.js";

// Request bodies: almost every API request is a small UTF-8 JSON document
// with a Content-Length. For those, reading the chunks and calling JSON.parse
// is all body-parser ends up doing, yet its general machinery (type and
// charset negotiation, a streaming decoder, five stream listeners) cost more
// per request than validating the body against the spec. Anything else
// (another charset, a compressed or chunked body, one over the limit) goes to
// express.json, which answers exactly as before. Errors carry body-parser's
// `type`, so the error handler turns both into the same Error objects.
//
// Both paths also refuse strings that a database cannot store (NUL, unpaired
// surrogates; see storable-strings.ts) with 400 INVALID_INPUT naming the field,
// and bytes that are not text in the body's charset (invalid UTF-8), which a
// decoder would otherwise replace with U+FFFD without a word.

const PLAIN_JSON = /^application\/json(?:\s*;\s*charset="?utf-8"?)?\s*$/i;

function bodyError(message: string, type: string): Error {
  return Object.assign(new Error(message), { status: 400, statusCode: 400, type });
}

/**
 * body-parser passes a decoder's own error on with a 400 status but no
 * `type` (a body sent as gzip that is not gzip): give it one, so that it is
 * answered as bad input like every other body error.
 */
function typed(err: unknown, req: Request): unknown {
  if (typeof err !== "object" || err === null || (err as { type?: unknown }).type !== undefined) {
    return err;
  }
  const encoding = req.headers["content-encoding"] ?? "identity";
  const reason = (err as { message?: unknown }).message;
  return bodyError(
    `Request body could not be decoded as Content-Encoding ${encoding}${typeof reason === "string" ? `: ${reason}` : ""}`,
    "encoding.invalid",
  );
}

/**
 * express.json's `verify` hook, given the raw (decompressed) body before it
 * is decoded: refuses a UTF-8 body that is not UTF-8. (In UTF-16, the one
 * thing that is not text, an unpaired surrogate, is refused naming its field.)
 */
function verifyEncoding(_req: Request, res: Response, buf: Buffer, encoding: string): void {
  if (buf.length === 0) res.locals.emptyBody = true;
  if (encoding.toLowerCase() === "utf-8" && !isUtf8(buf)) throw notText(encoding);
}

function notText(encoding: string): Error {
  return bodyError(`Request body is not valid ${encoding.toUpperCase()} text`, "charset.invalid");
}

export function jsonBody(limitBytes: number) {
  const parse = express.json({ limit: limitBytes, verify: verifyEncoding });
  // Not the hot path: the body may come in another charset, so every string is checked.
  const general = (req: Request, res: Response, next: NextFunction): void => {
    parse(req, res, (err?: unknown) => {
      if (err !== undefined) {
        next(typed(err, req));
        return;
      }
      // express.json reads an empty body as {}; here it is no body, as above.
      if (res.locals.emptyBody === true) req.body = undefined;
      const found = findUnstorableString(req.body);
      next(found ? unstorableStringError(found) : undefined);
    });
  };
  return (req: Request, res: Response, next: NextFunction): void => {
    const headers = req.headers;
    const type = headers["content-type"];
    const length = headers["content-length"];
    // Neither a length nor chunks: the request has no body (most GETs), and
    // body-parser would only find that out more slowly.
    if (length === undefined && headers["transfer-encoding"] === undefined) {
      next();
      return;
    }
    if (type === undefined || length === undefined || !PLAIN_JSON.test(type)) {
      // Not JSON, or no length: express.json decides (it skips non-JSON).
      general(req, res, next);
      return;
    }
    const expected = Number(length);
    if (
      headers["content-encoding"] !== undefined ||
      headers["transfer-encoding"] !== undefined ||
      !Number.isSafeInteger(expected) ||
      expected > limitBytes
    ) {
      general(req, res, next);
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    req.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
    });
    req.on("error", next);
    req.on("end", () => {
      if (received !== expected) {
        next(bodyError("request size did not match content length", "request.size.invalid"));
        return;
      }
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      if (!isUtf8(bytes)) {
        next(notText("utf-8"));
        return;
      }
      let text = bytes.toString("utf8");
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      // An empty body is no body: an operation that needs one says so
      // (operation-router.ts). Only objects and arrays are accepted, like express.json.
      if (text.length === 0) {
        next();
        return;
      }
      const first = text.trimStart()[0];
      if (first !== "{" && first !== "[") {
        next(bodyError("the body must be a JSON object or array", "entity.parse.failed"));
        return;
      }
      try {
        req.body = JSON.parse(text) as unknown;
      } catch (err) {
        next(bodyError((err as Error).message, "entity.parse.failed"));
        return;
      }
      // Decoded UTF-8 text holds neither NUL (JSON.parse refuses raw control
      // characters) nor unpaired surrogates: only a \u escape yields them.
      if (text.includes("\\u")) {
        const found = findUnstorableString(req.body);
        if (found) {
          next(unstorableStringError(found));
          return;
        }
      }
      next();
    });
  };
}
