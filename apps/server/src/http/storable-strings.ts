import type { NextFunction, Request, Response } from "express";
import { ApiError, fieldError } from "../errors.js";

// Strings that a database cannot keep as written. PostgreSQL refuses the NUL
// character in text; an unpaired UTF-16 surrogate (JSON's "\ud800") has no
// UTF-8 form, so each driver fails or alters it differently. Both are refused
// here, once for every request body and on every database alike, instead of
// surfacing as a database error.

// With the `u` flag a well-formed surrogate pair is one code point, so the
// range matches unpaired surrogates only.
const UNSTORABLE = /[\0\ud800-\udfff]/u;

export interface UnstorableString {
  /** Dotted path, as in the validator's errors: `body.items.0.name`, `query.objectId`. */
  path: string;
  message: string;
}

function problemOf(text: string): string | undefined {
  const found = UNSTORABLE.exec(text);
  if (!found) return undefined;
  return found[0] === "\0"
    ? "must not contain the NUL character (U+0000)"
    : "must not contain an unpaired UTF-16 surrogate (such as \\ud800)";
}

/**
 * The first string (value or property name) in a parsed JSON value that
 * cannot be stored. Iterative: a deeply nested body must not overflow the stack.
 */
export function findUnstorableString(value: unknown, root = "body"): UnstorableString | undefined {
  const pending: [unknown, string][] = [[value, root]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, path] = next;
    if (typeof node === "string") {
      const message = problemOf(node);
      if (message !== undefined) return { path, message };
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) pending.push([node[i], `${path}.${i}`]);
    } else if (typeof node === "object" && node !== null) {
      const entries = Object.entries(node);
      for (const [key] of entries) {
        const message = problemOf(key);
        if (message !== undefined) return { path: `${path}.${key}`, message: `name ${message}` };
      }
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i]!;
        pending.push([child, `${path}.${key}`]);
      }
    }
  }
  return undefined;
}

/** 400 INVALID_INPUT naming the field, in the shape of the validator's errors. */
export function unstorableStringError(found: UnstorableString): ApiError {
  const error = fieldError(found.path, found.message);
  return new ApiError(400, "INVALID_INPUT", `Invalid request: ${error.field}: ${error.message}`, {
    details: { errors: [error] },
  });
}

/**
 * The same refusal for query and path values, and for a URL whose
 * percent-encoding is not UTF-8 (`%ff`, `%c3%28`, a lone `%`): decoders would
 * turn those bytes into U+FFFD, or keep the escape as it is, and the request
 * would go on with a value the caller never sent. A URL carries NUL only as
 * `%00`, and other bytes beyond ASCII only escaped (Node refuses them raw), so
 * only a URL with `%` is looked at: one `includes` for most requests.
 */
export function refuseUnstorableUrl(req: Request, _res: Response, next: NextFunction): void {
  const url = req.url;
  if (!url.includes("%")) {
    next();
    return;
  }
  const queryAt = url.indexOf("?");
  const parts: [string, string][] = [
    ["path", queryAt === -1 ? url : url.slice(0, queryAt)],
    ["query", queryAt === -1 ? "" : url.slice(queryAt + 1)],
  ];
  for (const [where, text] of parts) {
    if (!decodes(text)) {
      next(unstorableStringError({ path: where, message: "must be percent-encoded UTF-8" }));
      return;
    }
  }
  if (!url.includes("%00")) {
    next();
    return;
  }
  const found = findUnstorableString(req.query, "query");
  next(
    unstorableStringError(
      found ?? { path: "path", message: "must not contain the NUL character (U+0000)" },
    ),
  );
}

function decodes(text: string): boolean {
  if (!text.includes("%")) return true;
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}
