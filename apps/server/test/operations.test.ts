import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { apiHandlers, type ApiServices } from "../src/api-handlers.js";
import { createApp } from "../src/http/app.js";
import {
  DEFAULTED_QUERY_PARAMETERS,
  OUTSIDE_VERSIONED_API,
  PUBLIC_OPERATIONS,
} from "../src/http/operation-types.js";
import { createLogger } from "../src/logger.js";
import { openApiPath } from "../src/paths.js";

// The handler table's type already refuses a missing or misspelt operation
// (see operation-types.test-d.ts); this checks the same contract against
// openapi.yaml itself, the way a reader of the spec would.

interface Parameter {
  name: string;
  in: string;
  allowReserved?: boolean;
  schema?: { default?: unknown; type?: string; enum?: unknown[]; $ref?: string };
}

interface Spec {
  paths: Record<string, Record<string, unknown> & { servers?: unknown; parameters?: unknown[] }>;
  components: { parameters: Record<string, Parameter> };
}

interface SpecOperation {
  operationId: string;
  method: string;
  path: string;
  /** Its `security` is empty: no credentials. */
  open: boolean;
  /** The path (or operation) has its own `servers`: it is not under the versioned base URL. */
  ownServers: boolean;
  parameters: Parameter[];
}

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

const spec = parse(readFileSync(openApiPath, "utf8")) as Spec;

function resolve(parameter: unknown): Parameter {
  const ref = (parameter as { $ref?: string }).$ref;
  if (ref === undefined) return parameter as Parameter;
  const name = ref.replace("#/components/parameters/", "");
  const found = spec.components.parameters[name];
  if (!found) throw new Error(`unresolved ${ref}`);
  return found;
}

const specOperations: SpecOperation[] = Object.entries(spec.paths).flatMap(([path, item]) =>
  METHODS.filter((method) => item[method] !== undefined).map((method) => {
    const operation = item[method] as {
      operationId: string;
      servers?: unknown;
      parameters?: unknown[];
      security?: unknown[];
    };
    return {
      operationId: operation.operationId,
      method,
      path,
      open: operation.security?.length === 0,
      ownServers: item.servers !== undefined || operation.servers !== undefined,
      parameters: [...(item.parameters ?? []), ...(operation.parameters ?? [])].map(resolve),
    };
  }),
);

/** Services are only called when a request comes; building the table needs none. */
const noServices = new Proxy({}, { get: () => ({}) }) as ApiServices;

describe("operation handlers", () => {
  it("reads the operations of openapi.yaml", () => {
    expect(specOperations.length).toBeGreaterThan(50);
    expect(specOperations.map((op) => op.operationId)).toContain("createCustomer");
  });

  it("has one handler for every operation of the versioned API, and none for an unknown one", () => {
    const served = specOperations.filter((op) => !op.ownServers).map((op) => op.operationId);
    const handled = Object.keys(apiHandlers(noServices));
    expect(new Set(served).size).toBe(served.length);
    expect(handled.sort()).toEqual(served.sort());
  });

  it("leaves to app.ts exactly the operations whose path has its own servers", () => {
    const outside = specOperations.filter((op) => op.ownServers).map((op) => op.operationId);
    expect([...OUTSIDE_VERSIONED_API].sort()).toEqual(outside.sort());
  });

  it("gives a PublicContext to exactly the operations of the versioned API without security", () => {
    const open = specOperations.filter((op) => op.open && !op.ownServers);
    expect([...PUBLIC_OPERATIONS].sort()).toEqual(open.map((op) => op.operationId).sort());
  });

  it("serves the operations outside the versioned API from app.ts", async () => {
    const app = createApp({
      log: createLogger("silent"),
      // Never reached: these operations need no credentials.
      tokens: noServices as never,
      agentTokens: noServices as never,
      clocks: noServices as never,
      validateResponses: false,
      operations: apiHandlers(noServices),
      apiBaseUrl: () => "http://127.0.0.1/2025-10-13",
      checkHealth: async () => {},
    });
    const server = createServer(app).listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      for (const op of specOperations.filter((o) => o.ownServers)) {
        const res = await fetch(`http://127.0.0.1:${port}${op.path}`, {
          method: op.method.toUpperCase(),
        });
        expect(res.status, `${op.method.toUpperCase()} ${op.path}`).toBe(200);
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("treats as always present exactly the query parameters that have a default", () => {
    const defaulted = new Set<string>();
    const declared = new Map<string, boolean[]>();
    for (const op of specOperations) {
      for (const p of op.parameters.filter((p) => p.in === "query")) {
        const hasDefault = p.schema?.default !== undefined;
        if (hasDefault) defaulted.add(p.name);
        declared.set(p.name, [...(declared.get(p.name) ?? []), hasDefault]);
      }
    }
    expect([...DEFAULTED_QUERY_PARAMETERS].sort()).toEqual([...defaulted].sort());
    // A listed name has its default wherever an operation declares it.
    for (const name of DEFAULTED_QUERY_PARAMETERS) {
      expect(declared.get(name)?.every(Boolean), name).toBe(true);
    }
  });

  it("lets every free-text query parameter carry `:` and `/` as typed (ids and times hold them)", () => {
    const strict = specOperations.flatMap((op) =>
      op.parameters
        .filter(
          (p) =>
            p.in === "query" &&
            p.schema?.type === "string" &&
            p.schema.enum === undefined &&
            p.allowReserved !== true,
        )
        .map((p) => `${op.method.toUpperCase()} ${op.path} ${p.name}`),
    );
    expect(strict).toEqual([]);
  });
});
