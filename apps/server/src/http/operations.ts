import type { NextFunction, Request, Response } from "express";
import { writingFor } from "../db/tenant.js";
import { callerOf, publicContextOf, type PublicContext, type RequestContext } from "./context.js";
import { runIdempotent, type IdempotencyStore } from "./idempotency.js";
import {
  WALLET_SIGNATURE,
  walletSignatureOf,
  type WALLET_SIGNATURE_ALIAS,
} from "../signing/headers.js";
import {
  PUBLIC_OPERATIONS,
  type IdempotentOperationId,
  type Input,
  type OperationId,
  type PublicOperationId,
  type Reply,
  type RequestHeaderName,
} from "./operation-types.js";

// Operations are the unit: each area exports a handler per operationId, typed
// from the generated `operations`, and server.ts joins them into one
// ApiHandlers object, so a missing handler, a misspelt operation or a wrong
// input or reply type does not compile. The dispatcher finds a request's
// handler by the operationId the validator matched, in one map lookup
// (Express's router would walk every area's path patterns again: on the
// card-authorization hot path that walk cost as much as all of request
// validation). Pages outside the API still use Express routers.

/** Who calls: the authenticated caller, or nobody for an operation without security. */
export type ContextOf<Op extends OperationId> = Op extends PublicOperationId
  ? PublicContext
  : RequestContext;

/** Turns the operation's validated input into a service call and returns its typed reply. */
export type Handler<Op extends OperationId> = (
  input: Input<Op>,
  ctx: ContextOf<Op>,
) => Promise<Reply<Op>> | Reply<Op>;

/** A handler that honours `Idempotency-Key` (see idempotency.ts). */
export interface IdempotentOperation<Op extends OperationId> {
  readonly idempotency: IdempotencyStore;
  readonly handler: Handler<Op>;
}

export type OperationEntry<Op extends OperationId> = Handler<Op> | IdempotentOperation<Op>;

/** One area's handlers: exactly the operations named, each typed from openapi.yaml. */
export type Handlers<Ids extends OperationId> = { [Op in Ids]: OperationEntry<Op> };

/** A handler for every operation the API serves. */
export type ApiHandlers = Handlers<OperationId>;

/** Runs the handler once per Idempotency-Key (the header the operation declares). */
export function idempotent<Op extends IdempotentOperationId>(
  store: IdempotencyStore,
  handler: Handler<Op>,
): IdempotentOperation<Op> {
  return { idempotency: store, handler };
}

/** Request headers that operations declare, read for their handlers as sent. */
const REQUEST_HEADERS = [
  "Idempotency-Key",
  "Request-Id",
] as const satisfies readonly RequestHeaderName[];

/** The wallet signature's two names, read as one (signing/headers.ts). */
type WalletSignatureHeader = typeof WALLET_SIGNATURE | typeof WALLET_SIGNATURE_ALIAS;

// A header added to openapi.yaml but missing above does not compile.
type UnreadHeader = Exclude<
  RequestHeaderName,
  (typeof REQUEST_HEADERS)[number] | WalletSignatureHeader
>;
const everyHeaderRead: [UnreadHeader] extends [never] ? true : UnreadHeader = true;
void everyHeaderRead;

/** The request as the validator left it, before it is given its operation's type. */
interface ValidatedInput {
  params: Record<string, string>;
  query: unknown;
  headers: Record<string, string>;
  body: unknown;
  fileNames: Record<string, string>;
}

interface SentReply {
  status: number;
  body?: unknown;
}

type ErasedHandler = (
  input: ValidatedInput,
  ctx: RequestContext | PublicContext,
) => Promise<SentReply> | SentReply;

interface Entry {
  handler: ErasedHandler;
  /** An operation without security: its handler gets a PublicContext. */
  public: boolean;
  idempotency?: IdempotencyStore;
}

type ErasedEntry = ErasedHandler | { idempotency: IdempotencyStore; handler: ErasedHandler };

const PUBLIC: ReadonlySet<string> = new Set(PUBLIC_OPERATIONS);

function entryOf(operationId: string, operation: ApiHandlers[OperationId]): Entry {
  // The trust boundary, and the only cast between validator and handlers:
  // express-openapi-validator has checked (and coerced, and filled the
  // defaults of) each request's parameters, headers and body against the
  // operation it matched, which is what the handler's Input<Op> describes;
  // the response validator checks the reply on the way out.
  const erased = operation as unknown as ErasedEntry;
  const isPublic = PUBLIC.has(operationId);
  if (typeof erased === "function") return { handler: erased, public: isPublic };
  return {
    handler: erased.handler,
    public: isPublic,
    idempotency: erased.idempotency,
  };
}

/** What the validator leaves on a request it matched to an operation. */
interface MatchedOperation {
  schema?: { operationId?: string };
  /** Path parameters, decoded (and validated). */
  pathParams?: Record<string, string>;
}

/** The files of a multipart body, as the validator's upload step (multer) left them. */
function uploadedFiles(
  req: Request,
): { fieldname: string; buffer: Buffer; originalname: string }[] {
  const files = (req as { files?: unknown }).files;
  return Array.isArray(files) ? (files as ReturnType<typeof uploadedFiles>) : [];
}

/**
 * A multipart body with its file parts in place: multer leaves the text
 * fields in `body` and the files in `files`. A file part (`format: binary`, a
 * string in the generated types) is handed over as a binary string, one
 * character per byte, so that a handler sees its exact bytes (`fileBytes`).
 */
function withFileParts(req: Request): unknown {
  const files = uploadedFiles(req);
  if (files.length === 0) return req.body;
  const body: Record<string, unknown> = { ...(req.body as Record<string, unknown> | undefined) };
  for (const file of files) body[file.fieldname] = file.buffer.toString("latin1");
  return body;
}

/** The bytes of a file part, as withFileParts handed it over. */
export function fileBytes(part: string): Buffer {
  return Buffer.from(part, "latin1");
}

function requestHeaders(req: Request): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of REQUEST_HEADERS) {
    const value = req.get(name);
    if (value !== undefined) headers[name] = value;
  }
  // Handlers read the signature under the spec's name, whichever name it came under.
  const signature = walletSignatureOf((name) => req.get(name));
  if (signature !== undefined) headers[WALLET_SIGNATURE] = signature;
  return headers;
}

/** Writes a reply: JSON, or no body (204). */
function send(res: Response, reply: SentReply): void {
  if (reply.body === undefined) res.status(reply.status).end();
  else res.status(reply.status).json(reply.body);
}

/**
 * Middleware, mounted after the validator, that runs the handler of the
 * operation it matched; requests with no handler go on to `next`. It gives
 * the handler its RequestContext: the caller as the authenticator found it,
 * with the platform's sandbox clock (the router has already refused a token
 * without the operation's permission: permissions.ts); for an operation
 * without security, a PublicContext.
 */
export function operationDispatcher(handlers: ApiHandlers) {
  const table = new Map<string, Entry>();
  for (const [operationId, operation] of Object.entries<ApiHandlers[OperationId]>(handlers)) {
    table.set(operationId, entryOf(operationId, operation));
  }
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const matched = (req as { openapi?: MatchedOperation }).openapi;
    const operationId = matched?.schema?.operationId;
    const entry = operationId === undefined ? undefined : table.get(operationId);
    if (operationId === undefined || entry === undefined) {
      next();
      return;
    }
    const input: ValidatedInput = {
      params: matched?.pathParams ?? {},
      query: req.query,
      headers: requestHeaders(req),
      body: withFileParts(req),
      fileNames: Object.fromEntries(uploadedFiles(req).map((f) => [f.fieldname, f.originalname])),
    };
    if (entry.public) {
      send(res, await entry.handler(input, publicContextOf(res)));
      return;
    }
    const ctx = callerOf(res);
    const key = input.headers["Idempotency-Key"];
    const idempotency = entry.idempotency;
    // Every write the request makes is for its platform (db/tenant.ts).
    if (idempotency === undefined || key === undefined) {
      send(res, await writingFor(ctx.platformId, () => entry.handler(input, ctx)));
      return;
    }
    const request = { operationId, key, params: input.params, body: input.body, ctx };
    const reply = await writingFor(ctx.platformId, () =>
      runIdempotent(idempotency, request, async () => {
        const result = await entry.handler(input, ctx);
        return { status: result.status, body: result.body };
      }),
    );
    send(res, reply);
  };
}
