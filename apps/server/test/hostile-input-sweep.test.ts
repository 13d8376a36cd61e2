import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { q } from "../src/db/query.js";
import { openApiPath } from "../src/paths.js";
import { PLATFORM_OWNED_TABLES } from "../src/platform/teardown.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  balanceOf,
  countRows,
  createAccount,
  createBankAccount,
  createCustomer,
} from "./money-helpers.js";

// Each class of hostile input, sent to every operation of openapi.yaml that
// takes it: integers out of range, JSON bodies that are empty or not UTF-8,
// queries that are not UTF-8, unreadable multipart bodies, webhook URLs that
// are not URLs, requests Node itself refuses. Every answer is a 4xx in the
// Error shape, and the database holds exactly what it held before.

type Schema = Record<string, unknown>;
interface Spec {
  paths: Record<string, Record<string, Schema>>;
  components: Record<string, Record<string, Schema>>;
}
const spec = parse(readFileSync(openApiPath, "utf8")) as Spec;
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const FAKE_ID = "Unknown:00000000-0000-4000-8000-000000000000";

function resolve(node: unknown): Schema {
  let at = node as Schema;
  for (let hops = 0; typeof at?.$ref === "string" && hops < 20; hops++) {
    const [, , kind, name] = (at.$ref as string).split("/");
    at = spec.components[kind!]![name!]!;
  }
  return at;
}

interface Operation {
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
interface IntegerField {
  op: Operation;
  in: "body" | "query";
  path: string;
  minimum?: number;
  exclusiveMinimum?: number;
  maximum?: number;
}

const METHODS = ["get", "post", "put", "patch", "delete"];

function operations(): Operation[] {
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

function integerFields(op: Operation): IntegerField[] {
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
function withValueAt(example: unknown, path: string, placeholder: string): unknown {
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
function holds(example: unknown, path: string): boolean {
  let node = example;
  for (const key of path.replace(/\[\]/g, ".0").split(".")) {
    if (typeof node !== "object" || node === null || !(key in node)) return false;
    node = (node as Record<string, unknown>)[key];
  }
  return true;
}

/** The numbers (as JSON text) outside a field's range: above 2^53 - 1, and below its minimum. */
function outOfRange(field: IntegerField): string[] {
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
function urlOf(op: Operation): string {
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
function rawRequest(origin: string, bytes: Buffer | string): Promise<RawAnswer> {
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

const ops = operations();
const jsonOps = ops.filter((op) => op.jsonExample !== undefined);

describe("openapi.yaml bounds every integer a request takes", () => {
  it("declares a maximum of at most 2^53 - 1 on each, the largest the sandbox represents exactly", () => {
    const fields = ops.flatMap(integerFields);
    expect(fields.length).toBeGreaterThan(50);
    const unbounded = fields
      .filter((f) => f.maximum === undefined || f.maximum > MAX_SAFE)
      .map((f) => `${f.op.method} ${f.op.path} ${f.in}:${f.path}`);
    expect(unbounded).toEqual([]);
  });
});

describe.each(databases)("hostile input to every operation on %s", (kind) => {
  let sandbox: TestSandbox;
  let authorization: string;
  beforeAll(async () => {
    sandbox = await startSandbox(kind, { hostileRequests: true });
    const { tokenId, secret } = sandbox.credentials;
    authorization = `Basic ${Buffer.from(`${tokenId}:${secret}`).toString("base64")}`;
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  /** Rows of every table a platform owns, and the platform's own row: what a refusal must leave. */
  async function snapshot() {
    const data = sandbox.server.data;
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
    const res = await sandbox.rawFetch(path, {
      method: op.method,
      ...(body !== undefined
        ? { body, headers: { "Content-Type": "application/json", ...headers } }
        : {}),
    });
    return { status: res.status, text: await res.text() };
  }

  it("refuses every integer out of its range with 400 naming the field, and writes nothing", async () => {
    const fields = ops.flatMap(integerFields);
    await expectRefusedWithoutWrites(async () => {
      for (const field of fields) {
        for (const value of outOfRange(field)) {
          const what = `${field.op.method} ${field.op.path} ${field.path}=${value}`;
          const { status, text } =
            field.in === "query"
              ? await fetchOp(field.op, `${urlOf(field.op)}?${field.path}=${value}`)
              : await fetchOp(
                  field.op,
                  urlOf(field.op),
                  JSON.stringify(withValueAt(field.op.jsonExample, field.path, "@@N@@")).replace(
                    '"@@N@@"',
                    value,
                  ),
                );
          const body = expectErrorObject(status, text, what) as {
            details?: { errors?: { field: string }[] };
          };
          // A platform's token never reaches an agent's operation: 401 comes first.
          if (field.op.agentOnly) continue;
          expect(status, what).toBe(400);
          // In a valid example, the one thing wrong is the field. (The validator
          // reports one error: a field the example lacks comes in a container
          // that may lack others.)
          const alone =
            field.in === "query"
              ? field.op.requiredQuery.every((name) => name === field.path)
              : holds(field.op.jsonExample, field.path);
          if (alone) {
            expect(body.details?.errors?.[0]?.field, what).toBe(field.path.replace(/\[\]/g, ".0"));
          }
        }
      }
    });
  }, 300_000);

  it("answers a JSON body that is empty or absent with a 4xx on every operation that takes one", async () => {
    const { origin } = sandbox.server;
    await expectRefusedWithoutWrites(async () => {
      for (const op of jsonOps) {
        const target = `/2025-10-13${urlOf(op)}`;
        for (const framing of ["", "Content-Length: 0\r\n", "Transfer-Encoding: chunked\r\n"]) {
          const end = framing.startsWith("Transfer") ? "0\r\n\r\n" : "";
          const answer = await rawRequest(
            origin,
            `${op.method} ${target} HTTP/1.1\r\nHost: sandbox\r\nAuthorization: ${authorization}\r\n` +
              `Content-Type: application/json\r\nConnection: close\r\n${framing}\r\n${end}`,
          );
          const what = `${op.method} ${op.path} [${framing.trim()}]`;
          const refusal = expectErrorObject(answer.status, answer.body, what) as {
            details?: { errors?: { field: string }[] };
          };
          if (op.agentOnly || !op.bodyRequired) continue;
          expect(answer.status, what).toBe(400);
          expect(refusal.details?.errors?.[0]?.field, what).toBe("body");
        }
      }
    });
  }, 300_000);

  it("refuses a JSON body that is not UTF-8 with 400 on every operation that takes one", async () => {
    await expectRefusedWithoutWrites(async () => {
      for (const op of jsonOps) {
        const text = JSON.stringify(op.jsonExample);
        // A byte that is never UTF-8 inside the first string, or in a string of its own.
        const quote = text.indexOf('"', 1);
        const bytes =
          text.startsWith("{") && quote > 0
            ? Buffer.concat([
                Buffer.from(text.slice(0, quote)),
                Buffer.from([0xff]),
                Buffer.from(text.slice(quote)),
              ])
            : Buffer.concat([Buffer.from('{"x":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
        const what = `${op.method} ${op.path}`;
        // Read directly, and (compressed) by the general reader.
        for (const [sent, headers] of [
          [bytes, {}],
          [gzipSync(bytes), { "Content-Encoding": "gzip" }],
        ] as const) {
          const res = await fetchOp(op, urlOf(op), sent, headers);
          const body = expectErrorObject(res.status, res.text, what);
          if (op.agentOnly) continue;
          expect(res.status, what).toBe(400);
          expect(body).toMatchObject({
            code: "INVALID_INPUT",
            message: expect.stringMatching(/UTF-8/),
          });
        }
      }
    });
  }, 300_000);

  it("refuses a query that is not percent-encoded UTF-8 with 400 on every operation that takes one", async () => {
    const withQuery = ops.filter((op) => op.queryParams.length > 0);
    expect(withQuery.length).toBeGreaterThan(20);
    await expectRefusedWithoutWrites(async () => {
      for (const op of withQuery) {
        for (const bad of ["%ff", "%c3%28", "a%e2%82", "%zz"]) {
          const res = await fetchOp(op, `${urlOf(op)}?${op.queryParams[0]}=${bad}`);
          const what = `${op.method} ${op.path}?${op.queryParams[0]}=${bad}`;
          const body = expectErrorObject(res.status, res.text, what) as {
            details?: { errors?: { field: string }[] };
          };
          expect(res.status, what).toBe(400);
          expect(body.details?.errors?.[0]?.field, what).toBe("query");
        }
      }
    });
  }, 300_000);

  describe("multipart bodies", () => {
    const BOUNDARY = "hostile-boundary";
    const multipartOps = () => ops.filter((op) => op.multipart);

    function part(name: string, value: string, fileName?: string): string {
      const disposition = `form-data; name="${name}"${fileName !== undefined ? `; filename="${fileName}"` : ""}`;
      const type = fileName !== undefined ? "Content-Type: text/csv\r\n" : "";
      return `--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n${value}\r\n`;
    }

    it("finds the three operations that take one", () => {
      expect(
        multipartOps()
          .map((op) => `${op.method} ${op.path}`)
          .sort(),
      ).toEqual(["POST /customers/bulk/csv", "POST /documents", "PUT /documents/{documentId}"]);
    });

    it("refuses malformed, truncated and NUL-carrying bodies with 400 and stores nothing", async () => {
      const customer = await createCustomer(sandbox.client);
      const fields =
        part("customerId", customer.id) + part("documentType", "PASSPORT") + part("country", "US");
      const bodies: [string, string][] = [
        [
          "a malformed part header",
          `--${BOUNDARY}\r\nbroken header\r\n\r\nx\r\n--${BOUNDARY}--\r\n`,
        ],
        [
          "a body cut short",
          `${fields}--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF`,
        ],
        ["no closing boundary", `${fields}${part("file", "%PDF-1.4", "a.pdf")}`],
        [
          "NUL in a file name",
          `${fields}${part("file", "%PDF-1.4", "a\u0000.pdf")}--${BOUNDARY}--\r\n`,
        ],
        [
          "NUL in a text part",
          `${part("customerId", customer.id)}${part("documentType", "PASS\u0000PORT")}${part("country", "U\u0000S")}${part("file", "%PDF-1.4", "a.pdf")}--${BOUNDARY}--\r\n`,
        ],
        [
          "NUL in a CSV file",
          `${part("file", "fullName,email\nAda\u0000 Lovelace,ada@example.com\n", "c.csv")}--${BOUNDARY}--\r\n`,
        ],
        [
          "a CSV file that is not UTF-8",
          `${part("file", "fullName\nAd\u00ff\n", "c.csv")}--${BOUNDARY}--\r\n`,
        ],
      ];
      await expectRefusedWithoutWrites(async () => {
        for (const op of multipartOps()) {
          for (const [what, body] of bodies) {
            // Written as latin1: one byte per character, so `\u00ff` is the byte 0xff.
            const res = await fetchOp(op, urlOf(op), Buffer.from(body, "latin1"), {
              "Content-Type": `multipart/form-data; boundary=${BOUNDARY}`,
            });
            const label = `${op.method} ${op.path}: ${what}`;
            const answer = expectErrorObject(res.status, res.text, label);
            expect(res.status, label).toBe(400);
            expect(answer.code, label).toBe("INVALID_INPUT");
          }
        }
      });
    });
  });

  describe("webhook endpoints", () => {
    const BAD = [
      "http://example.com/\thook",
      "http://example.com/hook\r\nX-Injected: 1",
      " http://example.com/hook",
      "http://example.com/hook ",
      "http://exa mple.com/hook",
      "http://example.com/ho\u0000ok",
      "http://example.com/\u00a0hook",
      "/relative/hook",
      "example.com/hook",
      "ftp://example.com/hook",
      "javascript:alert(1)",
      "http://",
      "http://169.254.169.254/latest/meta-data/",
      "http://169.254.0.1:8080/hook",
      "http://2852039166/", // 169.254.169.254 as one number
      "http://[fe80::1]/hook",
      "http://[febf:ffff::1]/hook",
      "http://[::ffff:169.254.169.254]/hook",
      "http://[fd00:ec2::254]/latest",
    ];

    it("refuses every URL that is not an absolute http(s) URL, or is link-local, and keeps the old one", async () => {
      const good = "http://127.0.0.1:9/hooks";
      expect(
        (await sandbox.client.PATCH("/config", { body: { webhookEndpoint: good } })).response
          .status,
      ).toBe(200);
      await expectRefusedWithoutWrites(async () => {
        for (const url of BAD) {
          const config = await sandbox.client.PATCH("/config", { body: { webhookEndpoint: url } });
          expect(config.response.status, JSON.stringify(url)).toBe(400);
          expect(config.error, JSON.stringify(url)).toMatchObject({
            code: "INVALID_INPUT",
            details: { errors: [{ field: "webhookEndpoint" }] },
          });
          const platform = await sandbox.client.POST("/sandbox/platforms", {
            body: { name: "hostile", webhookEndpoint: url },
          });
          expect(platform.response.status, JSON.stringify(url)).toBe(400);
        }
      });
      expect((await sandbox.client.GET("/config")).data?.webhookEndpoint).toBe(good);
    });

    it("keeps loopback and private hosts, where partners' receivers run", async () => {
      for (const url of [
        "http://localhost:8787/webhooks",
        "http://127.0.0.1:8787/webhooks",
        "http://[::1]:8787/webhooks",
        "http://10.1.2.3/webhooks",
        "http://192.168.0.10:3000/webhooks",
        "https://hooks.example.com/payments?x=1",
      ]) {
        const { response, data } = await sandbox.client.PATCH("/config", {
          body: { webhookEndpoint: url },
        });
        expect(response.status, url).toBe(200);
        expect(data?.webhookEndpoint).toBe(url);
      }
    });

    it("reports at most the first KiB of the receiver's answer to the test webhook", async () => {
      const answer = `${"é".repeat(600)}${"x".repeat(5000)}`;
      const receiver: Server = createServer((req, res) => {
        req.resume();
        req.on("end", () => res.writeHead(418, { "Content-Type": "text/plain" }).end(answer));
      });
      await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done));
      try {
        const { port } = receiver.address() as AddressInfo;
        await sandbox.client.PATCH("/config", {
          body: { webhookEndpoint: `http://127.0.0.1:${port}/hook` },
        });
        const { data, response } = await sandbox.client.POST("/sandbox/webhooks/test");
        expect(response.status).toBe(200);
        expect(data?.response_status).toBe(418);
        // 1024 bytes are 512 two-byte characters.
        expect(data?.response_body).toBe("é".repeat(512));
      } finally {
        await new Promise((done) => receiver.close(done));
      }
    });
  });

  describe("requests refused before the router", () => {
    it("answers headers too large with 431 in the Error shape", async () => {
      const answer = await rawRequest(
        sandbox.server.origin,
        `GET /2025-10-13/customers HTTP/1.1\r\nHost: sandbox\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
      );
      expect(answer.status).toBe(431);
      expect(answer.headers).toMatch(/content-type: application\/json/i);
      expect(JSON.parse(answer.body)).toMatchObject({ status: 431, code: "INVALID_INPUT" });
    });

    it("answers a request that is not HTTP, or has raw bytes in its URL, with 400 in the Error shape", async () => {
      for (const bytes of [
        "GET /2025-10-13/customers HTTP/1.1\r\nHost: sandbox\r\nNo colon here\r\n\r\n",
        "NOT-A-METHOD\r\n\r\n",
        Buffer.concat([
          Buffer.from("GET /2025-10-13/customers?platformCustomerId="),
          Buffer.from([0xff, 0xfe]),
          Buffer.from(" HTTP/1.1\r\nHost: sandbox\r\n\r\n"),
        ]),
      ]) {
        const answer = await rawRequest(sandbox.server.origin, bytes);
        expect(answer.status).toBe(400);
        expect(JSON.parse(answer.body)).toMatchObject({ status: 400, code: "INVALID_INPUT" });
      }
    });
  });

  describe("amounts the issue found answered with 500", () => {
    it("refuses transfers of 2^63, 2^63 - 1, 1e308 and above 2^53 - 1 and leaves the ledger as it was", async () => {
      const customer = await createCustomer(sandbox.client);
      const account = await createAccount(sandbox.client, customer.id, "USD", 1_000);
      const bank = await createBankAccount(sandbox.client, customer.id, "789");
      await expectRefusedWithoutWrites(async () => {
        for (const amount of [
          "9223372036854775808",
          "9223372036854775807",
          "1e308",
          "9007199254740993",
        ]) {
          for (const [path, source, destination] of [
            ["/transfer-out", account.id, bank.id],
            ["/transfer-in", bank.id, account.id],
          ] as const) {
            const res = await sandbox.rawFetch(path, {
              method: "POST",
              headers: { "Content-Type": "application/json" },
              body: `{"source":{"accountId":"${source}"},"destination":{"accountId":"${destination}"},"amount":${amount}}`,
            });
            expect(res.status, `${path} ${amount}`).toBe(400);
            expect(await res.json()).toMatchObject({
              code: "INVALID_INPUT",
              details: { errors: [{ field: "amount" }] },
            });
          }
        }
      });
      expect(await balanceOf(sandbox.client, account.id)).toBe(1_000);
    });

    it("refuses a fixed fee beyond 2^53 - 1 in PATCH /config instead of storing 1e+23", async () => {
      const res = await sandbox.rawFetch("/config", {
        method: "PATCH",
        headers: { "Content-Type": "application/json" },
        body: `{"feeConfigs":[{"feeType":"CROSS_CURRENCY_TRANSACTION","sourceCurrency":"USD","variableFeeBps":0,"fixedFee":{"amount":100000000000000000000000,"currency":"USD"}}]}`,
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        details: { errors: [{ field: "feeConfigs.0.fixedFee.amount" }] },
      });
      expect(JSON.stringify((await sandbox.client.GET("/config")).data)).not.toMatch(/e\+/);
    });
  });
});
