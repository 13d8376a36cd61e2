// What the hostile-input sweeps share: the operations of openapi.yaml with
// what each takes, the out-of-range values of each integer, raw requests no
// HTTP client would send, and the check that a refusal wrote nothing.
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { expect } from "vitest";
import { parse } from "yaml";
import { q } from "../../src/db/query.js";
import { openApiPath } from "../../src/paths.js";
import { PLATFORM_OWNED_TABLES } from "../../src/platform/teardown.js";
import type { TestSandbox } from "../harness.js";
import { countRows } from "../money-helpers.js";

type Schema = Record<string, unknown>;
interface Spec {
  paths: Record<string, Record<string, Schema>>;
  components: Record<string, Record<string, Schema>>;
}
const spec = parse(readFileSync(openApiPath, "utf8")) as Spec;
export const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const FAKE_ID = "Unknown:00000000-0000-4000-8000-000000000000";

function resolve(node: unknown): Schema {
  let at = node as Schema;
  for (let hops = 0; typeof at?.$ref === "string" && hops < 20; hops++) {
    const [, , kind, name] = (at.$ref as string).split("/");
    at = spec.components[kind!]![name!]!;
  }
  return at;
}

export interface Operation {
  method: string;
  path: string;
  /** Only agent tokens may call it (AgentAuth): a platform's token is refused first. */
  agentOnly: boolean;
  jsonExample?: unknown;
  multipart: boolean;
  bodyRequired: boolean;
  /** A value of each path parameter that fits its schema (its example), else FAKE_ID. */
  pathValues: Record<string, string>;
  queryParams: string[];
  /** Query parameters it requires: a request without them is refused for that first. */
  requiredQuery: string[];
}

/** An integer a request takes: in the body (a dotted path, `[]` for array items) or the query. */
export interface IntegerField {
  op: Operation;
  in: "body" | "query";
  path: string;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
}

const METHODS = ["get", "post", "put", "patch", "delete"];

export function operations(): Operation[] {
  const found: Operation[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    if (item.servers) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const security = (op.security ?? []) as Record<string, unknown>[];
      const body = resolve(op.requestBody);
      const content = (body?.content ?? {}) as Record<string, Schema>;
      const json = content["application/json"];
      const examples = json?.examples as Record<string, { value: unknown }> | undefined;
      const params = [...((item.parameters ?? []) as unknown[]), ...((op.parameters ?? []) as [])];
      found.push({
        method: method.toUpperCase(),
        path,
        agentOnly:
          security.length > 0 && security.every((s) => Object.keys(s).includes("AgentAuth")),
        ...(json
          ? { jsonExample: json.example ?? Object.values(examples ?? {})[0]?.value ?? {} }
          : {}),
        multipart: content["multipart/form-data"] !== undefined,
        bodyRequired: body?.required === true,
        pathValues: Object.fromEntries(
          params
            .map(resolve)
            .filter((p) => p.in === "path")
            .map((p) => {
              const schema = resolve(p.schema);
              const example =
                p.example ?? schema?.example ?? (schema?.examples as unknown[] | undefined)?.[0];
              return [p.name as string, typeof example === "string" ? example : FAKE_ID];
            }),
        ),
        queryParams: params
          .map(resolve)
          .flatMap((p) => (p.in === "query" ? [p.name as string] : [])),
        requiredQuery: params
          .map(resolve)
          .flatMap((p) => (p.in === "query" && p.required === true ? [p.name as string] : [])),
      });
    }
  }
  return found;
}

export function integerFields(op: Operation): IntegerField[] {
  const fields = new Map<string, IntegerField>();
  const walk = (node: unknown, path: string, seen: Set<Schema>) => {
    const schema = resolve(node);
    if (!schema || seen.has(schema)) return;
    const inner = new Set(seen).add(schema);
    const types = ([] as unknown[]).concat(schema.type ?? []);
    if (types.includes("integer") || types.includes("number")) {
      fields.set(path, {
        op,
        in: "body",
        path,
        ...(typeof schema.minimum === "number" ? { minimum: schema.minimum } : {}),
        ...(typeof schema.exclusiveMinimum === "number"
          ? { exclusiveMinimum: schema.exclusiveMinimum }
          : {}),
        ...(typeof schema.maximum === "number" ? { maximum: schema.maximum } : {}),
      });
    }
    for (const key of ["allOf", "oneOf", "anyOf"]) {
      for (const branch of (schema[key] ?? []) as unknown[]) walk(branch, path, inner);
    }
    for (const [name, child] of Object.entries((schema.properties ?? {}) as Schema)) {
      walk(child, path === "" ? name : `${path}.${name}`, inner);
    }
    if (schema.items) walk(schema.items, `${path}[]`, inner);
  };
  const item = spec.paths[op.path]!;
  const operation = item[op.method.toLowerCase()]!;
  const content = (resolve(operation.requestBody)?.content ?? {}) as Record<string, Schema>;
  if (content["application/json"]) walk(content["application/json"].schema, "", new Set());
  const params = [
    ...((item.parameters ?? []) as unknown[]),
    ...((operation.parameters ?? []) as []),
  ];
  for (const param of params.map(resolve)) {
    const schema = resolve(param.schema);
    if (param.in === "query" && schema?.type === "integer") {
      fields.set(`query:${param.name as string}`, {
        op,
        in: "query",
        path: param.name as string,
        ...(typeof schema.minimum === "number" ? { minimum: schema.minimum } : {}),
        ...(typeof schema.maximum === "number" ? { maximum: schema.maximum } : {}),
      });
    }
  }
  return [...fields.values()];
}

/** `example` with `placeholder` at `path` (containers made as needed; `[]` is item 0). */
export function withValueAt(example: unknown, path: string, placeholder: string): unknown {
  const root = (
    typeof example === "object" && example !== null ? structuredClone(example) : {}
  ) as Record<string, unknown>;
  const keys = path.replace(/\[\]/g, ".0").split(".");
  let node: Record<string, unknown> = root;
  keys.forEach((key, i) => {
    if (i === keys.length - 1) {
      node[key] = placeholder;
      return;
    }
    const nextIsIndex = keys[i + 1] === "0";
    const child = node[key];
    if (typeof child !== "object" || child === null) node[key] = nextIsIndex ? [{}] : {};
    else if (nextIsIndex && (child as unknown[]).length === 0) (child as unknown[]).push({});
    node = node[key] as Record<string, unknown>;
  });
  return root;
}

/** Whether `example` holds a value at `path` (`[]` is item 0). */
export function holds(example: unknown, path: string): boolean {
  let node = example;
  for (const key of path.replace(/\[\]/g, ".0").split(".")) {
    if (typeof node !== "object" || node === null || !(key in node)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return true;
}

/** The numbers (as JSON text) outside a field's range: above 2^53 - 1, and below its minimum. */
export function outOfRange(field: IntegerField): string[] {
  const values = [
    "9223372036854775808", // 2^63
    "9223372036854775807", // 2^63 - 1
    "1e308",
    "9007199254740992", // 2^53
    "9007199254740993", // 2^53 + 1, which JSON.parse rounds to 2^53
  ];
  if (field.maximum !== undefined && field.maximum < MAX_SAFE)
    values.push(String(field.maximum + 1));
  const floor =
    field.minimum ??
    (field.exclusiveMinimum !== undefined ? field.exclusiveMinimum + 1 : undefined);
  if (floor !== undefined) values.push(String(floor - 1), "-270765765175310", "-1e308");
  return values;
}

/** Operations' paths with every parameter filled in with an id that names nothing. */
export function urlOf(op: Operation): string {
  return op.path.replace(/\{([^}]+)\}/g, (_all, name: string) =>
    encodeURIComponent(op.pathValues[name] ?? FAKE_ID),
  );
}

interface RawAnswer {
  status: number;
  headers: string;
  body: string;
}

/** Bytes sent as they are on a connection of their own: what no HTTP client would send. */
export function rawRequest(origin: string, bytes: Buffer | string): Promise<RawAnswer> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const split = text.indexOf("\r\n\r\n");
      resolve({
        status: Number(text.slice(9, 12)),
        headers: text.slice(0, split),
        body: text.slice(split + 4),
      });
    });
  });
}

/** The refusal checks, on the sandbox `current()` returns (each describe.each block starts its own). */
export function hostileInputSteps(current: () => TestSandbox) {
  /** Rows of every table a platform owns, and the platform's own row: what a refusal must leave. */
  async function snapshot() {
    const data = current().server.data;
    const counts: Record<string, number> = {};
    for (const table of PLATFORM_OWNED_TABLES)
      counts[table] = await countRows(data, q.selectFrom(table));
    const platforms = await data.all(q.selectFrom("Platform").selectAll().orderBy("id"));
    return { counts, platforms: JSON.stringify(platforms) };
  }

  /** Runs `sweep`, then checks that every answer was a 4xx Error object and nothing was written. */
  async function expectRefusedWithoutWrites(sweep: () => Promise<void>) {
    const before = await snapshot();
    await sweep();
    expect(await snapshot()).toEqual(before);
  }

  function expectErrorObject(status: number, text: string, what: string) {
    expect(status, `${what}: ${text}`).toBeGreaterThanOrEqual(400);
    expect(status, `${what}: ${text}`).toBeLessThan(500);
    const body = JSON.parse(text) as { status: number; code: string; message: string };
    expect(body, what).toMatchObject({
      status,
      code: expect.any(String),
      message: expect.any(String),
    });
    return body;
  }

  async function fetchOp(op: Operation, path: string, body?: BodyInit, headers?: HeadersInit) {
    const res = await current().rawFetch(path, {
      method: op.method,
      ...(body !== undefined
        ? { body, headers: { "Content-Type": "application/json", ...headers } }
        : {}),
    });
    return { status: res.status, text: await res.text() };
  }

  return { snapshot, expectRefusedWithoutWrites, expectErrorObject, fetchOp };
}
