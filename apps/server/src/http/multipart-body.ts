import type { NextFunction, Request, RequestHandler, Response } from "express";
import { findUnstorableString, unstorableStringError } from "./storable-strings.js";

// Multipart bodies (a document, a customers CSV) are read by the validator's
// upload step (multer). A body it cannot read (a malformed part header, a
// body cut short) comes out of it as a 500 carrying the parser's message;
// here it is the caller's malformed input, a 400 like any other body that
// cannot be read. A body that was read has its text parts and file names
// checked like JSON strings (storable-strings.ts), so NUL is refused the
// same way on both databases.

const MULTIPART = /^\s*multipart\//i;

/** The parts the upload step left on the request. */
interface UploadedPart {
  fieldname: string;
  originalname: string;
}

/** The body error json-body.ts gives: the error handler answers it 400 INVALID_INPUT. */
function unreadable(reason: string): Error {
  return Object.assign(new Error(`Multipart body could not be read: ${reason}`), {
    status: 400,
    statusCode: 400,
    type: "multipart.invalid",
  });
}

/** The upload step's own failure: an HTTP error of status 500 made from the parser's error. */
function isUploadFailure(err: unknown): err is { message?: string } {
  if (typeof err !== "object" || err === null) return false;
  const { status, errors } = err as { status?: unknown; errors?: unknown };
  return status === 500 && Array.isArray(errors);
}

function refusedParts(req: Request): Error | undefined {
  const inBody = findUnstorableString(req.body);
  if (inBody) return unstorableStringError(inBody);
  const files = (req as { files?: unknown }).files;
  for (const file of Array.isArray(files) ? (files as UploadedPart[]) : []) {
    const found = findUnstorableString(file.originalname, `body.${file.fieldname}`);
    if (found) return unstorableStringError({ ...found, message: `file name ${found.message}` });
  }
  return undefined;
}

/**
 * `router` (the API's operation router, whose validator reads multipart
 * bodies) with multipart requests answered as above; other requests go
 * through it untouched.
 */
export function withMultipartBodies(router: RequestHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const type = req.headers["content-type"];
    if (type === undefined || !MULTIPART.test(type)) return router(req, res, next);
    return router(req, res, (err?: unknown) => {
      if (err === undefined || err === null) next(refusedParts(req));
      else if (isUploadFailure(err)) next(unreadable(err.message ?? "malformed"));
      else next(err);
    });
  };
}
