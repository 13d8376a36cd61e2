import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import express from "express";
import * as OpenApiValidator from "express-openapi-validator";
import { parse } from "yaml";
import { API_BASE_PATH } from "../../src/config.js";
import type { ApiAnswer } from "../../src/http/answer-observer.js";
import { PathTree, onePathDocument, type ApiDocument } from "../../src/http/operation-router.js";

// The second response check of the integration suite: every answer the
// sandbox gives to one of production's operations must be one production's
// own contract allows (a status it declares for the operation, a body its
// schema for that status accepts). The schemas are production's document as
// contract/live-contract.json keeps it (scripts/contract-parity.mjs
// --refresh); express-openapi-validator checks the bodies, through its
// public options, as it checks the sandbox's own answers against openapi.yaml.

const root = join(import.meta.dirname, "..", "..", "..", "..");
const METHODS = ["get", "put", "post", "patch", "delete"];

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Operation = { operationId?: string; responses?: Record<string, Json> };

const live = JSON.parse(
  readFileSync(join(root, "contract", "live-contract.json"), "utf8"),
) as ApiDocument;
// The kept facts have no prose, so no info object; served under the
// sandbox's base path, like openapi.yaml.
live.info = { title: "production contract", version: "live" };
live.servers = [{ url: `http://localhost${API_BASE_PATH}` }];

/** Production's operations, but its sandbox's (the sandbox's own rules govern those). */
const checkedPaths = Object.keys(live.paths).filter((path) => !path.startsWith("/sandbox/"));
const tree = new PathTree(checkedPaths);

interface AllowEntry {
  operation: string;
  detail?: string;
  pattern?: string;
}
const urlShape = (path: string) => path.replace(/\{[^}]+\}/g, "{}");
/** contract/parity-allowlist.yaml: a status the sandbox declares beyond production's, with the line it rests on. */
const allowlist = (
  parse(readFileSync(join(root, "contract", "parity-allowlist.yaml"), "utf8")) as AllowEntry[]
).filter((entry) => entry.operation !== "webhooks");
/** Whether the allow-list lets the sandbox's document differ so (`detail` as contract-parity.mjs writes it). */
const allowed = (method: string, path: string, detail: string): boolean => {
  const operation = `${method} ${urlShape(path)}`;
  return allowlist.some(
    (entry) =>
      (entry.operation === "*" || urlShape(entry.operation) === operation) &&
      (entry.detail === undefined || detail.startsWith(entry.detail)) &&
      (entry.pattern === undefined || new RegExp(entry.pattern).test(detail)),
  );
};

/** Without discriminator objects: each oneOf's branches decide alone (each fixes its value). */
function withoutDiscriminators(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutDiscriminators);
  if (value === null || typeof value !== "object") return value;
  const out: { [key: string]: Json } = {};
  for (const [key, entry] of Object.entries(value)) {
    const isDiscriminator =
      key === "discriminator" && (Array.isArray(value.oneOf) || Array.isArray(value.anyOf));
    if (!isDiscriminator) out[key] = withoutDiscriminators(entry);
  }
  return out;
}

export interface ContractViolation {
  operation: string;
  status: number;
  problem: string;
}

/** One finding, as a failing test prints it. */
export const describeViolation = (v: ContractViolation) =>
  `${v.operation} answered ${v.status}: ${v.problem}`;

/** What production declares for a method and request path, if it is one of its operations. */
function productionOperation(method: string, requestPath: string) {
  const path = tree.match(requestPath);
  const operation =
    path === undefined ? undefined : (live.paths[path]?.[method.toLowerCase()] as Operation);
  if (path === undefined || operation === undefined || !METHODS.includes(method.toLowerCase())) {
    return undefined;
  }
  return { path, operation, name: `${method} ${path} (${operation.operationId ?? "?"})` };
}

/**
 * An HTTP server holding one express-openapi-validator per production path
 * (validating responses only); it answers each replayed answer as the
 * sandbox did and collects what the validator says of it.
 */
export class ProductionContractCheck {
  private readonly pending = new Map<string, ApiAnswer>();
  private readonly findings = new Map<string, string[]>();
  private readonly validators = new Map<string, express.RequestHandler>();
  private server: Server | undefined;
  private baseUrl = "";
  private next = 0;

  private validatorOf(path: string): express.RequestHandler {
    let validator = this.validators.get(path);
    if (!validator) {
      const apiSpec = withoutDiscriminators(
        onePathDocument(live, path) as unknown as Json,
      ) as unknown as Parameters<typeof OpenApiValidator.middleware>[0]["apiSpec"];
      const handlers = OpenApiValidator.middleware({
        apiSpec,
        // Production's document is checked where it is published; the kept
        // facts lack its prose (descriptions the document schema requires).
        validateApiSpec: false,
        validateRequests: false,
        validateSecurity: false,
        validateFormats: true,
        validateResponses: {
          removeAdditional: false,
          onError: (err, _body, req) => {
            const id = req.get("x-answer") ?? "";
            const issues = (err as { errors?: { path?: string; message?: string }[] }).errors;
            // One finding per failing path; an enum's list of values cut short.
            for (const issue of issues?.length ? issues : [{ message: err.message }]) {
              const text = `${issue.path ?? ""} ${issue.message ?? ""}`.trim();
              this.findings.get(id)?.push(text.length > 160 ? `${text.slice(0, 157)}...` : text);
            }
          },
        },
      });
      const chain = (Array.isArray(handlers) ? handlers : [handlers]) as express.RequestHandler[];
      const router = express.Router();
      router.use(...chain);
      validator = router;
      this.validators.set(path, validator);
    }
    return validator;
  }

  private async start(): Promise<void> {
    if (this.server) return;
    const app = express();
    app.use(API_BASE_PATH, (req, res, next) => {
      const path = tree.match(req.path);
      if (path === undefined) return next(new Error(`no production path for ${req.path}`));
      this.validatorOf(path)(req, res, next);
    });
    app.use(API_BASE_PATH, (req, res) => {
      const answer = this.pending.get(req.get("x-answer") ?? "")!;
      res.status(answer.status);
      if (answer.body === undefined) res.end();
      else res.json(answer.body);
    });
    app.use(
      (err: Error, req: express.Request, res: express.Response, _next: express.NextFunction) => {
        this.findings.get(req.get("x-answer") ?? "")?.push(err.message);
        if (!res.headersSent) res.status(599).end();
      },
    );
    await new Promise<void>((resolve) => {
      this.server = app.listen(0, "127.0.0.1", () => resolve());
    });
    this.baseUrl = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  /** What is wrong with one answer by production's contract (nothing for a non-production operation). */
  async check(answer: ApiAnswer): Promise<ContractViolation[]> {
    const found = productionOperation(answer.method, answer.path);
    if (!found) return [];
    const declared = Object.keys(found.operation.responses ?? {});
    const status = String(answer.status);
    const known = [status, `${status[0]}XX`, "default"].some((key) => declared.includes(key));
    if (!known) {
      if (allowed(answer.method, found.path, `ours: response ${status}`)) return [];
      return [
        {
          operation: found.name,
          status: answer.status,
          problem: `production declares only ${declared.join(", ")}${codeOf(answer.body)}`,
        },
      ];
    }
    // A body the allow-list lets differ for this status (the spec's reading wins).
    if (allowed(answer.method, found.path, `ours: response ${status} application/json`)) return [];
    await this.start();
    const id = String(++this.next);
    this.pending.set(id, answer);
    this.findings.set(id, []);
    try {
      const res = await fetch(`${this.baseUrl}${API_BASE_PATH}${answer.path}`, {
        method: answer.method,
        headers: { "x-answer": id, accept: "application/json" },
      });
      await res.arrayBuffer();
      // An error code the allow-list grants the operation (with its spec line).
      const code = (answer.body as { code?: unknown } | undefined)?.code;
      const codeAllowed = allowed(
        answer.method,
        found.path,
        `ours: response ${status} application/json.code: code ${String(code)}`,
      );
      const problems = this.findings
        .get(id)!
        .filter((problem) => !(codeAllowed && problem.startsWith("/response/code ")));
      return problems.map((problem) => ({
        operation: found.name,
        status: answer.status,
        problem: `${problem}${codeOf(answer.body)}`,
      }));
    } finally {
      this.pending.delete(id);
      this.findings.delete(id);
    }
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}

/** An error answer's code, to say which error broke the contract. */
function codeOf(body: unknown): string {
  const code = (body as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? ` (code ${code})` : "";
}
