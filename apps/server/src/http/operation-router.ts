import type { NextFunction, Request, RequestHandler, Response } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import { ApiError, fieldError } from "../errors.js";
import type { ApiDocument, Json } from "./api-document.js";
import {
  arrayQueryParameters,
  splitCommaJoinedQuery,
  withCommaJoinedArrays,
} from "./array-query.js";
import { inTurn } from "./in-turn.js";
import { checkPermission, permissionRules } from "./permissions.js";
import { requestFields, type RequestFields } from "./request-fields.js";

// The API's router, compiled once from openapi.yaml: it finds a request's path
// in a tree of path segments (one step per segment, whatever the number of
// operations) and answers 404 and 405 itself. express-openapi-validator then
// validates the request against that one path: each path has a validator of
// its own, made on first use from a copy of the document that holds only that
// path and the components it reaches. The validator's own route lookup
// tries every documented path in turn, compiling each pattern again on every
// request; over a one-path document that lookup is a single step, through
// the validator's public options alone.

export type { ApiDocument } from "./api-document.js";

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

interface Node {
  literal: Map<string, Node>;
  /** A `{param}` segment. */
  param?: Node;
  /** The openapi.yaml path that ends here. */
  path?: string;
}

/** The path key of openapi.yaml that a request path matches, if any (literal segments win). */
export class PathTree {
  private readonly root: Node = { literal: new Map() };

  constructor(paths: Iterable<string>) {
    for (const path of paths) {
      let node = this.root;
      for (const segment of path.split("/").slice(1)) {
        if (/^\{[^}]+\}$/.test(segment)) {
          node = node.param ??= { literal: new Map() };
        } else {
          let next = node.literal.get(segment);
          if (!next) node.literal.set(segment, (next = { literal: new Map() }));
          node = next;
        }
      }
      if (node.path !== undefined) throw new Error(`two paths end alike: ${node.path}, ${path}`);
      node.path = path;
    }
  }

  match(pathname: string): string | undefined {
    return find(this.root, pathname.split("/"), 1);
  }
}

function find(node: Node, segments: string[], index: number): string | undefined {
  if (index === segments.length) return node.path;
  const segment = segments[index]!;
  const literal = node.literal.get(segment);
  const viaLiteral = literal ? find(literal, segments, index + 1) : undefined;
  if (viaLiteral !== undefined) return viaLiteral;
  // A parameter takes one non-empty segment.
  return node.param && segment !== "" ? find(node.param, segments, index + 1) : undefined;
}

/**
 * The document with only `path` and the components it reaches (through
 * `$ref`s and discriminator mappings, transitively), kept in document order.
 * As it loads a document, the validator walks every component it is given
 * and compiles the branches of each discriminated oneOf: given every
 * component, that walk was most of each path's first request (1.5 s and
 * more). A deep copy: validators may annotate the document they are given.
 *
 * That walk also annotates schemas it meets after a discriminated oneOf, in
 * order, so which components are given, and their order, can change the
 * annotations of the ones the path reaches (in another order, a branch was
 * given another branch's properties). The validator reads those annotations
 * only on a request body: operation-router.test.ts checks that every body
 * comes out as in the whole document.
 */
export function onePathDocument(doc: ApiDocument, path: string): ApiDocument {
  const item = doc.paths[path];
  if (!item) throw new Error(`no path ${path}`);
  const components = doc.components ?? {};
  const reached = new Set<string>();
  const follow = (ref: string): void => {
    const target = componentOf(doc, ref);
    if (target === undefined) throw new Error(`${path}: cannot follow ${ref}`);
    const key = ref.split("/").slice(2, 4).join("/");
    if (reached.has(key)) return;
    reached.add(key);
    visit(target);
  };
  const visit = (value: Json): void => {
    if (Array.isArray(value)) {
      for (const entry of value) visit(entry);
    } else if (value !== null && typeof value === "object") {
      for (const [key, entry] of Object.entries(value)) {
        if (key === "$ref" && typeof entry === "string") follow(entry);
        else visit(entry);
      }
      // A discriminator's mapping names schemas too (by reference or by name).
      const mapping = isObject(value.discriminator) ? value.discriminator.mapping : undefined;
      if (isObject(mapping)) {
        for (const target of Object.values(mapping)) {
          if (typeof target === "string") {
            follow(target.startsWith("#") ? target : `#/components/schemas/${target}`);
          }
        }
      }
    }
  };
  visit(item);
  const kept: Record<string, Record<string, Json>> = {};
  for (const [kind, entries] of Object.entries(components)) {
    // Security schemes are named by `security` requirements, not by $refs.
    const names = Object.keys(entries).filter(
      (name) => kind === "securitySchemes" || reached.has(`${kind}/${name}`),
    );
    if (names.length > 0) kept[kind] = Object.fromEntries(names.map((n) => [n, entries[n]!]));
  }
  return structuredClone({
    ...doc,
    paths: { [path]: item },
    components: kept,
    webhooks: undefined,
  });
}

/**
 * The document as the validator is given it: without the discriminator
 * objects of oneOfs nested inside a request body. The validator uses a
 * discriminator only at the top of a body (to pick the branch to report
 * against); walking a nested one, it keeps the discriminator as it goes on
 * to the body's later properties and takes the next referenced one for a
 * branch, so the body itself ends up demanding the nested property at its
 * top (a quote request was refused for lacking a top-level `sourceType`).
 * A discriminator only names what the oneOf already decides (each branch's
 * one-value enum), so without them the same bodies validate. openapi.yaml,
 * the docs and the client keep every discriminator. Changes `doc` in place:
 * it is given a copy (onePathDocument).
 */
export function withTopLevelDiscriminatorsOnly(doc: ApiDocument): ApiDocument {
  const resolve = (value: Json | undefined): Json | undefined => {
    let node = value;
    for (let hops = 0; isObject(node) && typeof node.$ref === "string" && hops < 10; hops++) {
      node = componentOf(doc, node.$ref);
    }
    return node;
  };
  // The schemas at the top of a request body keep theirs.
  const kept = new Set<Json>();
  for (const item of Object.values(doc.paths)) {
    for (const method of METHODS) {
      const operation = item[method];
      const body = isObject(operation) ? resolve(operation.requestBody) : undefined;
      const content = isObject(body) && isObject(body.content) ? body.content : {};
      for (const media of Object.values(content)) {
        const schema = isObject(media) ? resolve(media.schema) : undefined;
        if (schema !== undefined) kept.add(schema);
      }
    }
  }
  const strip = (value: Json): void => {
    if (Array.isArray(value)) {
      for (const entry of value) strip(entry);
    } else if (isObject(value)) {
      // A schema's discriminator object, not a property named so.
      const isDiscriminated =
        isObject(value.discriminator) &&
        typeof value.discriminator.propertyName === "string" &&
        (Array.isArray(value.oneOf) || Array.isArray(value.anyOf));
      if (isDiscriminated && !kept.has(value)) delete value.discriminator;
      for (const entry of Object.values(value)) strip(entry);
    }
  };
  strip(doc.paths as Json);
  if (doc.components) strip(doc.components as Json);
  return doc;
}

const COMPONENTS = "#/components/";

/** The component a `#/components/<kind>/<name>` reference names, if the document has it. */
function componentOf(doc: ApiDocument, ref: string): Json | undefined {
  const [kind, name] = ref.startsWith(COMPONENTS) ? ref.split("/").slice(2) : [];
  return kind === undefined || name === undefined ? undefined : doc.components?.[kind]?.[name];
}

function isObject(value: Json | undefined): value is { [key: string]: Json } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

type ValidatorOptions = Parameters<typeof OpenApiValidator.middleware>[0];

export interface OperationRouterOptions {
  doc: ApiDocument;
  /** express-openapi-validator's options, but the document. */
  validator: Omit<ValidatorOptions, "apiSpec">;
  /**
   * Routers made with the same key (same document, same validator options)
   * share their paths' validators. Compiling a path's schemas is most of the
   * cost of its first request (hundreds of milliseconds for the large oneOf
   * account shapes), and a process that starts several servers, as the tests
   * do, then pays it once.
   */
  shareKey?: string;
}

/** Validators of every router made with a shareKey, by key and path. */
const sharedValidators = new Map<string, RequestHandler>();

/** The paths of the versioned API: those without servers of their own. */
export function servedPaths(doc: ApiDocument): string[] {
  return Object.keys(doc.paths).filter((path) => doc.paths[path]!.servers === undefined);
}

/** An operation that asks for no credentials: its own `security` is empty. */
function isPublic(op: Json | undefined): op is { [key: string]: Json } {
  return isObject(op) && Array.isArray(op.security) && op.security.length === 0;
}

/** The operationIds of the versioned API whose `security` is empty (no credentials). */
export function publicOperationIds(doc: ApiDocument): string[] {
  return servedPaths(doc).flatMap((path) =>
    METHODS.flatMap((method) => {
      const op = doc.paths[path]![method];
      return isPublic(op) && typeof op.operationId === "string" ? [op.operationId] : [];
    }),
  );
}

/**
 * Whether a request (method, and path under the base path) is for an
 * operation whose `security` is empty, found the way the router finds it.
 */
export function publicOperationMatcher(
  doc: ApiDocument,
): (method: string, path: string) => boolean {
  const open = new Map<string, Set<string>>();
  for (const path of servedPaths(doc)) {
    for (const method of METHODS) {
      if (isPublic(doc.paths[path]![method])) {
        let methods = open.get(path);
        if (!methods) open.set(path, (methods = new Set()));
        methods.add(method.toUpperCase());
      }
    }
  }
  // Every served path, so that a request matches the path the router will
  // give it (literal segments win over another path's parameter).
  const tree = new PathTree(servedPaths(doc));
  return (method, path) => {
    const matched = tree.match(path);
    return matched !== undefined && open.get(matched)?.has(method) === true;
  };
}

/**
 * Middleware for the versioned API's router (mounted at the base path): finds
 * the operation's path, refuses unknown paths (404) and methods (405 with
 * Allow), refuses an API token without the operation's `x-permission`
 * (permissions.ts), and validates the request against its path's validator.
 * Paths with servers of their own are served elsewhere, outside the
 * versioned API.
 */
export function operationRouter(options: OperationRouterOptions): RequestHandler {
  const { doc } = options;
  const served = servedPaths(doc);
  const tree = new PathTree(served);
  const allowed = new Map(
    served.map((path) => [
      path,
      METHODS.filter((m) => doc.paths[path]![m] !== undefined).map((m) => m.toUpperCase()),
    ]),
  );
  // Compiled with the routes: a missing or ill-fitting x-permission stops the server here.
  const permissions = permissionRules(doc, served);
  const needsJson = requiredJsonBodies(doc);
  const arrayQueries = new Map(served.map((path) => [path, arrayQueryParameters(doc, path)]));
  // Read by the error handler to name the field a caller probably meant.
  const fields = new Map<string, RequestFields>();
  const fieldsOf = (path: string, method: string): RequestFields => {
    const key = `${method} ${path}`;
    let known = fields.get(key);
    if (!known) fields.set(key, (known = requestFields(doc, path, method)));
    return known;
  };
  // Shared with every router of the same key, else this router's own.
  const validators =
    options.shareKey === undefined ? new Map<string, RequestHandler>() : sharedValidators;
  const validatorOf = (path: string): RequestHandler => {
    const key = `${options.shareKey ?? ""}\n${path}`;
    let validator = validators.get(key);
    if (!validator) {
      validator = inTurn(
        OpenApiValidator.middleware({
          ...options.validator,
          // Read from openapi.yaml, which the validator checks as it loads it.
          apiSpec: withCommaJoinedArrays(
            withTopLevelDiscriminatorsOnly(onePathDocument(doc, path)),
          ) as unknown as ValidatorOptions["apiSpec"],
        }),
      );
      validators.set(key, validator);
    }
    return validator;
  };

  return (req: Request, res: Response, next: NextFunction): void => {
    const path = tree.match(req.path);
    if (path === undefined) {
      throw new ApiError(404, "NOT_FOUND", "No such operation: check the method and path");
    }
    const methods = allowed.get(path)!;
    if (!methods.includes(req.method)) {
      const allow = methods.join(", ");
      throw new ApiError(
        405,
        "METHOD_NOT_ALLOWED",
        `${req.method} is not allowed on this path; allowed: ${allow}`,
        { headers: { Allow: allow } },
      );
    }
    checkPermission(permissions.get(path)!.get(req.method), res);
    // The validator reads a body that is not there as one to check against
    // a discriminator, and fails.
    if (req.body === undefined && isJson(req)) {
      if (needsJson.has(`${req.method} ${path}`)) {
        throw new ApiError(400, "INVALID_INPUT", "Invalid request: body: a JSON body is required", {
          details: { errors: [fieldError("body", "a JSON body is required; this one is empty")] },
        });
      }
      // An empty body where the body is optional is no body: the validator
      // must not look for one because of its content type.
      delete req.headers["content-type"];
    }
    const arrays = arrayQueries.get(path)!.get(req.method);
    if (arrays) splitCommaJoinedQuery(req, arrays);
    res.locals.requestFields = fieldsOf(path, req.method);
    validatorOf(path)(req, res, next);
  };
}

function isJson(req: Request): boolean {
  return /^\s*application\/json\s*(?:;|$)/i.test(req.headers["content-type"] ?? "");
}

/** `METHOD path` of the operations whose request body is required and may be JSON. */
function requiredJsonBodies(doc: ApiDocument): Set<string> {
  const found = new Set<string>();
  for (const path of Object.keys(doc.paths)) {
    for (const method of METHODS) {
      const operation = doc.paths[path]![method];
      let body = isObject(operation) ? operation.requestBody : undefined;
      if (isObject(body) && typeof body.$ref === "string") body = componentOf(doc, body.$ref);
      if (!isObject(body) || body.required !== true || !isObject(body.content)) continue;
      if (body.content["application/json"] !== undefined) {
        found.add(`${method.toUpperCase()} ${path}`);
      }
    }
  }
  return found;
}
