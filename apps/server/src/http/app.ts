import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import express, { type Express, type Router } from "express";
import { pinoHttp } from "pino-http";
import { parse } from "yaml";
import { DOCUMENT_MAX_BYTES } from "@payments-sandbox/sandbox-rules";
import { sha256Hex } from "../crypto/sha256.js";
import { API_BASE_PATH } from "../config.js";
import { ApiError } from "../errors.js";
import type { Logger } from "../logger.js";
import { openApiPath } from "../paths.js";
import type { ApiTokenVerifier } from "../platform/api-tokens.js";
import type { PlatformClocks } from "../platform/platform-clock.js";
import { answerObserver, type ApiAnswer } from "./answer-observer.js";
import { authenticator, securityHandlers, type AgentTokenVerifier } from "./authenticator.js";
import { docsRoutes } from "./docs.js";
import { errorHandler } from "./error-handler.js";
import { inTurn } from "./in-turn.js";
import { jsonBody } from "./json-body.js";
import { withMultipartBodies } from "./multipart-body.js";
import { operationDispatcher, type ApiHandlers } from "./operations.js";
import {
  PathTree,
  servedPaths,
  operationRouter,
  publicOperationIds,
  publicOperationMatcher,
  type ApiDocument,
  type OperationRouterOptions,
} from "./operation-router.js";
import { PUBLIC_OPERATIONS } from "./operation-types.js";
import { recordRequests, type RequestRecorder } from "./request-recording.js";
import { refuseUnstorableUrl } from "./storable-strings.js";

export interface AppOptions {
  log: Logger;
  tokens: ApiTokenVerifier;
  agentTokens: AgentTokenVerifier;
  clocks: PlatformClocks;
  validateResponses: boolean;
  /** The API's base URL, known once the server listens: the served spec names it. */
  apiBaseUrl: () => string;
  /** A handler for every API operation, found by the operationId the validator matched. */
  operations: ApiHandlers;
  /** Pages outside the versioned API, without Basic auth (e.g. card reveal). */
  pages?: Router[];
  /** Throws when the database cannot be used (GET /healthz). */
  checkHealth: () => Promise<void>;
  /** Rewrites a request path before it is logged (to keep tokens in paths out of logs). */
  logPath?: (path: string) => string;
  /** Sandbox only: each platform's recent requests, for GET /sandbox/logs/requests. */
  requestLog?: RequestRecorder;
  /** Test seam: sees every answer of the versioned API once it is sent. */
  observeAnswers?: (answer: ApiAnswer) => void;
}

export function createApp(options: AppOptions): Express {
  const { log } = options;
  const logPath = options.logPath ?? ((path: string) => path);
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", false);
  // API responses are never served from a cache; hashing every body for an
  // ETag is wasted work on every request.
  app.set("etag", false);

  app.use((req, res, next) => {
    res.locals.traceId = randomUUID();
    res.setHeader("X-Trace-Id", res.locals.traceId as string);
    next();
  });
  // Request logs are written at info level: below it, skip the per-request
  // logger (it costs a child logger per request and nothing reads req.log).
  if (log.isLevelEnabled("info")) {
    app.use(
      pinoHttp({
        logger: log,
        genReqId: (_req, res) => (res as express.Response).locals.traceId as string,
        // Only what identifies the request: never headers, bodies or secrets.
        serializers: {
          req: (req: { id: string; method: string; url: string }) => ({
            id: req.id,
            method: req.method,
            path: logPath(req.url.split("?")[0] ?? ""),
          }),
          // The error code (never the message or body) says why a request was refused.
          res: (res: { statusCode: number; raw: express.Response }) => {
            const code = res.raw.locals.errorCode as string | undefined;
            return code === undefined
              ? { statusCode: res.statusCode }
              : { statusCode: res.statusCode, code };
          },
        },
      }),
    );
  }

  if (options.requestLog) app.use(API_BASE_PATH, recordRequests(options.requestLog, logPath));

  const apiText = readFileSync(openApiPath, "utf8");
  const doc = parse(apiText) as ApiDocument;
  assertPublicOperations(doc);
  // Every API request takes each of these steps, in this order.
  const api = inTurn([
    ...(options.observeAnswers ? [answerObserver(options.observeAnswers)] : []),
    jsonBody(1024 * 1024),
    refuseUnstorableUrl,
    authenticator(
      options.tokens,
      options.agentTokens,
      options.clocks,
      log,
      publicOperationMatcher(doc),
    ),
    withMultipartBodies(
      operationRouter({
        doc,
        // Servers of one process with the same document and options share
        // their compiled validators (the security handlers are module-level).
        shareKey: `${sha256Hex(apiText)}:${options.validateResponses}`,
        validator: apiValidatorOptions(options.validateResponses),
      }),
    ),
    operationDispatcher(options.operations),
  ]);

  // The validator matches the full URL against the spec's server URL, which
  // ends in this same version segment.
  app.use(API_BASE_PATH, api);
  // After the API: most requests are API requests, and Express tries each
  // of these paths in turn before reaching a later mount.
  app.get("/healthz", async (_req, res) => {
    try {
      await options.checkHealth();
      res.json({ status: "ok" });
    } catch (err) {
      log.warn({ err }, "health check failed");
      res.status(503).json({ status: "unavailable", reason: `database: ${messageOf(err)}` });
    }
  });
  app.use(docsRoutes(options.apiBaseUrl));
  app.get("/", (_req, res) => {
    res.redirect("/docs");
  });
  for (const router of options.pages ?? []) app.use(router);
  const apiPaths = new PathTree(servedPaths(doc));
  app.use((req, _res, next) => next(notFound(req.path, apiPaths)));
  app.use(errorHandler(log, logPath));
  return app;
}

/** express-openapi-validator's options for the API (all but the document). */
export function apiValidatorOptions(
  validateResponses: boolean,
): OperationRouterOptions["validator"] {
  return {
    // Bodies are JSON and keep their types: `"name": false` is an error,
    // not "false". Path and query parameters, strings on the wire, are
    // coerced by the validator whatever this option says.
    validateRequests: { allowUnknownQueryParameters: false, coerceTypes: false },
    validateResponses: validateResponses ? { removeAdditional: false } : false,
    // Credentials are checked by the authenticator above, before
    // validation; these handlers only apply each operation's `security`
    // (BasicAuth and/or AgentAuth) to the kind of caller it found.
    validateSecurity: { handlers: securityHandlers },
    validateFormats: true,
    // Uploads (a customers CSV, a document): a single file of at most the
    // largest any operation takes, kept in memory for the handler, which
    // applies its own operation's limit.
    fileUploader: { limits: { fileSize: DOCUMENT_MAX_BYTES, files: 1 } },
  };
}

/**
 * The authenticator lets requests to the spec's operations without security
 * through with no caller, and the dispatcher gives exactly PUBLIC_OPERATIONS'
 * handlers a PublicContext: the two lists must agree, or a request would
 * reach a handler without the context it is typed for.
 */
function assertPublicOperations(doc: ApiDocument): void {
  const inSpec = publicOperationIds(doc).sort();
  const typed = [...PUBLIC_OPERATIONS].sort();
  if (inSpec.join() !== typed.join()) {
    throw new Error(
      `operations without security in openapi.yaml (${inSpec.join(", ")}) differ from PUBLIC_OPERATIONS (${typed.join(", ")})`,
    );
  }
}

/**
 * 404 outside the API and the pages. Every API path starts with the version
 * segment: a path that would be an API path with it says so.
 */
function notFound(path: string, apiPaths: PathTree): ApiError {
  if (path.startsWith(`${API_BASE_PATH}/`)) return new ApiError(404, "NOT_FOUND", "Not found");
  const hint =
    apiPaths.match(path) !== undefined
      ? `: did you mean ${API_BASE_PATH}${path}?`
      : ` (for example ${API_BASE_PATH}/customers)`;
  return new ApiError(404, "NOT_FOUND", `Not found. API paths start with ${API_BASE_PATH}${hint}`);
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
