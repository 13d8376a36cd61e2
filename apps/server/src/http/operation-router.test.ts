import { once } from "node:events";
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import express, { type NextFunction, type Request, type Response } from "express";
import * as OpenApiValidator from "express-openapi-validator";
import { parse } from "yaml";
import { describe, expect, it } from "vitest";
import { API_BASE_PATH } from "../config.js";
import { openApiPath } from "../paths.js";
import { apiValidatorOptions } from "./app.js";
import {
  onePathDocument,
  PathTree,
  publicOperationMatcher,
  servedPaths,
  withTopLevelDiscriminatorsOnly,
  type ApiDocument,
} from "./operation-router.js";

const doc = parse(readFileSync(openApiPath, "utf8")) as ApiDocument;

describe("PathTree", () => {
  const tree = new PathTree([
    "/cards",
    "/cards/{id}",
    "/cards/{id}/reveal",
    "/cards/primary",
    "/agents/device-codes/{code}/redeem",
  ]);

  it("finds each path by its segments, a literal segment before a parameter", () => {
    expect(tree.match("/cards")).toBe("/cards");
    expect(tree.match("/cards/Card:1")).toBe("/cards/{id}");
    expect(tree.match("/cards/primary")).toBe("/cards/primary");
    expect(tree.match("/cards/primary/reveal")).toBe("/cards/{id}/reveal");
    expect(tree.match("/agents/device-codes/abc/redeem")).toBe(
      "/agents/device-codes/{code}/redeem",
    );
  });

  it("matches nothing else: extra, missing or empty segments", () => {
    expect(tree.match("/cards/")).toBeUndefined();
    expect(tree.match("/cards//reveal")).toBeUndefined();
    expect(tree.match("/cards/1/reveal/x")).toBeUndefined();
    expect(tree.match("/agents/device-codes/abc")).toBeUndefined();
    expect(tree.match("/nothing")).toBeUndefined();
  });

  it("refuses two paths that would match the same requests", () => {
    expect(() => new PathTree(["/cards/{id}", "/cards/{cardId}"])).toThrow(/two paths/);
  });

  it("routes every path of openapi.yaml to itself", () => {
    const paths = Object.keys(doc.paths);
    const all = new PathTree(paths);
    for (const path of paths) {
      const sample = path.replace(/\{[^}]+\}/g, "Sample:1");
      expect(all.match(sample), path).toBe(path);
    }
  });
});

describe("publicOperationMatcher", () => {
  const isPublic = publicOperationMatcher(doc);

  it("picks the method and path of an operation without security, and nothing beside it", () => {
    expect(isPublic("POST", "/agents/device-codes/WDJB-MJHT-QRTX/redeem")).toBe(true);
    expect(isPublic("GET", "/agents/device-codes/WDJB-MJHT-QRTX/redeem")).toBe(false);
    expect(isPublic("POST", "/agents/device-codes/WDJB-MJHT-QRTX")).toBe(false);
    expect(isPublic("POST", "/agents")).toBe(false);
    expect(isPublic("GET", "/transactions")).toBe(false);
    // Outside the versioned API: app.ts serves it without the authenticator.
    expect(isPublic("GET", "/healthz")).toBe(false);
  });
});

describe("onePathDocument", () => {
  it("keeps one path and the components it reaches, so each reference resolves inside the copy", () => {
    for (const path of Object.keys(doc.paths)) {
      const one = onePathDocument(doc, path);
      expect(Object.keys(one.paths)).toEqual([path]);
      const text = JSON.stringify(one);
      for (const [, kind, name] of text.matchAll(/"#\/components\/([^/"]+)\/([^"/]+)"/g)) {
        expect(one.components?.[kind!]?.[name!], `${path}: ${kind}/${name}`).toBeDefined();
      }
      // Each component kept whole, in document order; every security scheme.
      for (const [kind, entries] of Object.entries(one.components ?? {})) {
        const names = Object.keys(doc.components?.[kind] ?? {});
        expect(
          names.filter((name) => name in entries),
          `${path}: ${kind}`,
        ).toEqual(Object.keys(entries));
        for (const [name, value] of Object.entries(entries)) {
          expect(value).toEqual(doc.components?.[kind]?.[name]);
        }
      }
      expect(one.components?.securitySchemes).toEqual(doc.components?.securitySchemes);
    }
  });

  it("follows references from component to component and through discriminator mappings", () => {
    const small: ApiDocument = {
      openapi: "3.1.0",
      paths: { "/a": { get: { responses: { "200": { $ref: "#/components/responses/A" } } } } },
      components: {
        responses: {
          A: { content: { "application/json": { schema: { $ref: "#/components/schemas/A" } } } },
          Unused: { description: "unused" },
        },
        schemas: {
          Unused: { type: "string" },
          A: {
            oneOf: [{ $ref: "#/components/schemas/B" }],
            discriminator: {
              propertyName: "kind",
              mapping: { b: "#/components/schemas/B", c: "C" },
            },
          },
          B: { properties: { c: { $ref: "#/components/schemas/C" } } },
          C: { type: "object" },
        },
      },
    };
    expect(onePathDocument(small, "/a").components).toEqual({
      responses: { A: small.components!.responses!.A },
      schemas: {
        A: small.components!.schemas!.A,
        B: small.components!.schemas!.B,
        C: { type: "object" },
      },
    });
    small.components!.schemas!.B = { $ref: "#/components/schemas/Missing" };
    expect(() => onePathDocument(small, "/a")).toThrow(
      /cannot follow #\/components\/schemas\/Missing/,
    );
  });

  it("is a copy: changing it leaves the document as it was", () => {
    const one = onePathDocument(doc, "/customers");
    (one.paths["/customers"] as Record<string, unknown>).get = null;
    expect(doc.paths["/customers"]?.get).not.toBeNull();
  });

  // As it loads a document, the validator annotates a discriminated oneOf
  // with a validator for each branch, and reads those annotations back on a
  // request body alone. Which schemas it annotates depends on every
  // component it walks, in document order, so a one-path document must give
  // each request body the annotations it has in the whole document (as the
  // validators of one path with every component, before, gave it). The rest
  // of what the validator prepares does not depend on the other components.
  it(
    "prepares every request body as the whole document does",
    async () => {
      const served = servedPaths(doc);
      const withBodies = served.flatMap((path) =>
        Object.entries(doc.paths[path]!)
          .filter(([, operation]) => isRecord(operation) && operation.requestBody !== undefined)
          .map(([method]) => ({ method: method.toUpperCase(), path })),
      );
      const whole = await prepared(
        withTopLevelDiscriminatorsOnly(
          structuredClone({
            ...doc,
            paths: Object.fromEntries(served.map((path) => [path, doc.paths[path]!])),
          }),
        ),
        withBodies,
      );
      // Not vacuous: customers are created through a discriminated oneOf.
      expect(whole.get("POST /customers")?.bodies["application/json"]).toMatchObject({
        property: "customerType",
      });
      // A body is picked by its own top-level discriminator, or by none: a
      // quote request, whose source and destination are discriminated
      // oneOfs, needs no `sourceType` at its top.
      expectOwnDiscriminators(whole, withBodies);
      expect(whole.get("POST /quotes")?.bodies["application/json"]).toBeNull();
      for (const path of new Set(withBodies.map((r) => r.path))) {
        const requests = withBodies.filter((r) => r.path === path);
        const one = await prepared(
          withTopLevelDiscriminatorsOnly(onePathDocument(doc, path)),
          requests,
        );
        expectOwnDiscriminators(one, requests);
        for (const { method } of requests) {
          const key = `${method} ${path}`;
          expect(one.get(key), key).toEqual(whole.get(key));
        }
      }
    },
    5 * 60_000,
  );
});

describe("withTopLevelDiscriminatorsOnly", () => {
  it("keeps a request body's top-level discriminator, drops those nested in bodies, and leaves openapi.yaml's", () => {
    const copy = withTopLevelDiscriminatorsOnly(structuredClone(doc));
    const schemas = (d: ApiDocument) =>
      d.components!.schemas! as Record<string, { discriminator?: unknown }>;
    expect(schemas(copy).CustomerCreateRequestOneOf!.discriminator).toBeDefined();
    expect(schemas(copy).VerifyAuthCredentialRequest!.discriminator).toBeDefined();
    for (const nested of [
      "QuoteSourceOneOf",
      "QuoteDestinationOneOf",
      "ExternalAccountCreateInfoOneOf",
    ]) {
      expect(schemas(copy)[nested]!.discriminator, nested).toBeUndefined();
      expect(schemas(doc)[nested]!.discriminator, nested).toBeDefined();
    }
  });
});

/** Each body's discriminator annotation is that of its own top-level schema, or there is none. */
function expectOwnDiscriminators(
  found: Map<string, Prepared>,
  requests: { method: string; path: string }[],
): void {
  for (const { method, path } of requests) {
    const operation = doc.paths[path]![method.toLowerCase()] as OperationLike;
    for (const [type, annotation] of Object.entries(found.get(`${method} ${path}`)!.bodies)) {
      expect(
        isRecord(annotation) ? annotation.property : undefined,
        `${method} ${path} ${type}`,
      ).toBe(topLevelDiscriminator(operation, type));
    }
  }
}

/** The discriminator property of an operation's request body schema (through its $ref), if any. */
function topLevelDiscriminator(operation: OperationLike, type: string): string | undefined {
  let schema = operation.requestBody?.content?.[type]?.schema as Json | undefined;
  while (isRecord(schema) && typeof schema.$ref === "string") {
    schema = schema.$ref
      .slice(2)
      .split("/")
      .reduce<Json | undefined>(
        (at, key) => (isRecord(at) ? (at as Record<string, Json>)[key] : undefined),
        doc as unknown as Json,
      );
  }
  const discriminator = isRecord(schema) ? schema.discriminator : undefined;
  return isRecord(discriminator) && typeof discriminator.propertyName === "string"
    ? discriminator.propertyName
    : undefined;
}

/** What the validator prepared for one operation, as its middleware exposes it on the request. */
interface Prepared {
  route: string | undefined;
  /** The operation, its request body and responses resolved. */
  operation: string;
  /** By content type: the body's discriminator annotation, if any. */
  bodies: Record<string, Json>;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface DiscriminatorAnnotation {
  property: string;
  options: Json;
  validators: Record<string, { schema: Json }>;
}

interface OperationLike {
  requestBody?: {
    content?: Record<string, { schema?: { _discriminator?: DiscriminatorAnnotation } }>;
  };
}

/**
 * Loads the validator (with the API's options) over `apiSpec`, sends it each
 * request (with no body or credentials: refused, but the operation is found
 * first) and reads what it prepared.
 */
async function prepared(
  apiSpec: ApiDocument,
  requests: { method: string; path: string }[],
): Promise<Map<string, Prepared>> {
  const found = new Map<string, Prepared>();
  const record = (req: Request, res: Response): void => {
    const openapi = (req as Request & { openapi?: { openApiRoute: string; schema: OperationLike } })
      .openapi;
    const operation = openapi?.schema ?? {};
    const bodies = Object.entries(operation.requestBody?.content ?? {}).map(
      ([type, media]): [string, Json] => {
        const annotation = media.schema?._discriminator;
        return [
          type,
          annotation === undefined
            ? null
            : {
                property: annotation.property,
                options: annotation.options,
                branches: Object.fromEntries(
                  Object.entries(annotation.validators).map(([option, v]) => [option, v.schema]),
                ),
              },
        ];
      },
    );
    found.set(`${req.method} ${req.get("x-path")}`, {
      route: openapi?.openApiRoute,
      operation: JSON.stringify(operation),
      bodies: Object.fromEntries(bodies),
    });
    res.status(204).end();
  };
  const app = express();
  app.use(
    OpenApiValidator.middleware({
      ...apiValidatorOptions(true),
      apiSpec: apiSpec as unknown as Parameters<typeof OpenApiValidator.middleware>[0]["apiSpec"],
    }),
  );
  app.use(record);
  app.use((_err: unknown, req: Request, res: Response, _next: NextFunction) => record(req, res));
  const server = app.listen(0, "127.0.0.1");
  await once(server, "listening");
  try {
    const { port } = server.address() as AddressInfo;
    for (const { method, path } of requests) {
      const url = `http://127.0.0.1:${port}${API_BASE_PATH}${path.replace(/\{[^}]+\}/g, "Sample:1")}`;
      await fetch(url, { method, headers: { "x-path": path } });
    }
  } finally {
    server.close();
    server.closeAllConnections();
  }
  return found;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
