import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import express from "express";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_BASE_PATH } from "../src/config.js";
import { apiValidatorOptions } from "../src/http/app.js";
import { errorHandler } from "../src/http/error-handler.js";
import { jsonBody } from "../src/http/json-body.js";
import { operationRouter, type ApiDocument } from "../src/http/operation-router.js";
import { openApiPath } from "../src/paths.js";
import { pino } from "pino";

// Every request example of production's contract (request bodies, and
// parameters where it gives examples) is one the sandbox's request
// validation accepts: an integration that sends what production documents is
// not refused before it reaches the sandbox's rules. The validator is the
// server's own (openapi.yaml, the server's options; credentials are checked
// before it, by the authenticator, so not here). An example the spec refuses
// is listed, with the spec's line, in production-examples-refused.yaml.

const root = join(import.meta.dirname, "..", "..", "..");
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = { [key: string]: Json };
const live = JSON.parse(
  readFileSync(join(root, "contract", "live-contract.json"), "utf8"),
) as Obj & { paths: Record<string, Obj>; components: Record<string, Record<string, Obj>> };

interface Refused {
  operation: string;
  example: string;
  rests_on: Record<string, string>;
}
const refusals = (parse(
  readFileSync(join(import.meta.dirname, "production-examples-refused.yaml"), "utf8"),
) ?? []) as Refused[];
const refused = refusals.map((entry) => `${entry.operation} ${entry.example}`);

const resolve = (node: Json | undefined): Obj | undefined => {
  let at = node;
  for (let hops = 0; at && typeof at === "object" && !Array.isArray(at) && "$ref" in at; hops++) {
    if (hops > 10) return undefined;
    const [, , kind, name] = String(at.$ref).split("/");
    at = live.components[kind!]?.[name!];
  }
  return at && typeof at === "object" && !Array.isArray(at) ? at : undefined;
};

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  explode?: boolean;
  example?: Json;
  schema?: { example?: Json };
}

interface ExampleRequest {
  /** "METHOD /path" as production writes it. */
  operation: string;
  /** Which example: the body's name, or "parameters". */
  example: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

const exampleOf = (param: Parameter): Json | undefined => param.example ?? param.schema?.example;

/**
 * A path parameter production gives no example for still needs a well-formed
 * id: openapi.yaml's example for the same position of the same path.
 */
const ours = parse(readFileSync(openApiPath, "utf8")) as {
  paths: Record<string, Obj>;
  components: { parameters?: Record<string, Obj> };
};
const urlShape = (path: string) => path.replace(/\{[^}]+\}/g, "{}");
function ourPathExample(path: string, name: string): Json | undefined {
  const position = path.split("/").indexOf(`{${name}}`);
  const our = Object.keys(ours.paths).find((p) => urlShape(p) === urlShape(path));
  const ourName = our?.split("/")[position]?.slice(1, -1);
  if (!our || !ourName) return undefined;
  const item = ours.paths[our]!;
  const params = [
    ...((item.parameters ?? []) as Obj[]),
    ...Object.values(item).flatMap((op) =>
      op && typeof op === "object" && !Array.isArray(op) ? ((op.parameters ?? []) as Obj[]) : [],
    ),
  ].map((p) =>
    typeof p.$ref === "string" ? ours.components.parameters?.[p.$ref.split("/").pop()!] : p,
  );
  const param = params.find((p) => p?.name === ourName && p.in === "path") as Parameter | undefined;
  return param ? exampleOf(param) : undefined;
}

function requestsOf(path: string, method: string, item: Obj, op: Obj): ExampleRequest[] {
  const params = [...((item.parameters ?? []) as Json[]), ...((op.parameters ?? []) as Json[])]
    .map((p) => resolve(p) as unknown as Parameter | undefined)
    .filter((p): p is Parameter => p !== undefined);
  const operation = `${method.toUpperCase()} ${path}`;
  const withParams = (example: string, media?: string, body?: Json): ExampleRequest => {
    let url = path;
    const query = new URLSearchParams();
    const headers: Record<string, string> = media ? { "content-type": media } : {};
    for (const param of params) {
      const value = exampleOf(param);
      if (param.in === "path") {
        // A path without an example id still needs a segment: any id shape.
        const id = value ?? ourPathExample(path, param.name) ?? "x";
        url = url.replace(`{${param.name}}`, encodeURIComponent(String(id)));
      } else if (value === undefined) {
        continue;
      } else if (param.in === "query") {
        // Serialised as the contract's style says: form, exploded unless it says not.
        if (Array.isArray(value) && param.explode !== false) {
          for (const v of value) query.append(param.name, String(v));
        } else {
          query.append(param.name, Array.isArray(value) ? value.join(",") : String(value));
        }
      } else if (param.in === "header") {
        headers[param.name] = String(value);
      }
    }
    const search = query.size > 0 ? `?${query}` : "";
    return {
      operation,
      example,
      method: method.toUpperCase(),
      url: `${url}${search}`,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    };
  };
  const requestBody = resolve(op.requestBody);
  const out: ExampleRequest[] = [];
  for (const [media, content] of Object.entries((requestBody?.content ?? {}) as Obj)) {
    const c = content as Obj;
    if (media !== "application/json") continue;
    if (c.example !== undefined) out.push(withParams("example", media, c.example));
    for (const [name, ex] of Object.entries((c.examples ?? {}) as Obj)) {
      const value = resolve(ex)?.value;
      if (value !== undefined) out.push(withParams(name, media, value));
    }
  }
  // Parameter examples on their own, where no body is needed or one was sent above.
  if (params.some((p) => exampleOf(p) !== undefined && p.in !== "path") && out.length === 0) {
    if (requestBody?.required !== true) out.push(withParams("parameters"));
  }
  return out;
}

const requests: ExampleRequest[] = Object.entries(live.paths).flatMap(([path, item]) =>
  ["get", "put", "post", "patch", "delete"].flatMap((method) => {
    const op = item[method];
    return op && typeof op === "object" && !Array.isArray(op)
      ? requestsOf(path, method, item, op)
      : [];
  }),
);

describe("production's request examples", () => {
  let server: Server;
  let base = "";
  beforeAll(async () => {
    const doc = parse(readFileSync(openApiPath, "utf8")) as ApiDocument;
    const app = express();
    app.use(
      API_BASE_PATH,
      jsonBody(1024 * 1024),
      operationRouter({
        doc,
        // The server's options; who may call is the authenticator's, not the document's.
        validator: { ...apiValidatorOptions(false), validateSecurity: false },
      }),
      (_req: express.Request, res: express.Response) => {
        res.status(204).end();
      },
    );
    app.use(errorHandler(pino({ level: "silent" }), (path) => path));
    await new Promise<void>((done) => {
      server = app.listen(0, "127.0.0.1", () => done());
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}${API_BASE_PATH}`;
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
  });

  it("are many (the contract's examples were read)", () => {
    expect(requests.length).toBeGreaterThan(50);
  });

  for (const request of requests) {
    const name = `${request.operation} ${request.example}`;
    const listed = refused.includes(name);
    it(`${name} is ${listed ? "refused, as the spec says" : "accepted"}`, async () => {
      const res = await fetch(`${base}${request.url}`, {
        method: request.method,
        headers: request.headers,
        ...(request.body === undefined ? {} : { body: request.body }),
      });
      const answer = res.status === 204 ? "accepted" : `${res.status} ${await res.text()}`;
      if (listed) expect(answer).not.toBe("accepted");
      else expect(answer).toBe("accepted");
    });
  }

  it("are listed as refused only if the contract has them, each with the line that refuses it", () => {
    const names = new Set(requests.map((r) => `${r.operation} ${r.example}`));
    for (const name of refused) expect(names.has(name), name).toBe(true);
    for (const entry of refusals) {
      const quotes = Object.entries(entry.rests_on ?? {});
      expect(quotes.length, `${entry.operation} ${entry.example}`).toBeGreaterThan(0);
      for (const [source, quote] of quotes) {
        expect(["service-spec.md", "FACTS.md"]).toContain(source);
        expect(quote.length).toBeGreaterThan(12);
      }
    }
  });
});
