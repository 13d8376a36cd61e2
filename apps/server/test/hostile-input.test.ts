import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { q } from "../src/db/query.js";
import { parse } from "yaml";
import { openApiPath } from "../src/paths.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { countRows, balanceOf, createAccount, createCustomer } from "./money-helpers.js";

// Bad input is a 400, never a 5xx: bodies keep their JSON types, bodies that
// cannot be decoded are INVALID_INPUT, and strings a database cannot store
// (NUL, unpaired surrogates) are refused naming the field, on both databases.

interface SpecOperation {
  requestBody?: {
    content: Record<string, { example?: unknown; examples?: Record<string, { value: unknown }> }>;
  };
}

interface BodyOperation {
  method: string;
  path: string;
  example: unknown;
}

/** Every operation in openapi.yaml that takes a request body, with its first example. */
function bodyOperations(): BodyOperation[] {
  const spec = parse(readFileSync(openApiPath, "utf8")) as {
    paths: Record<string, Record<string, SpecOperation>>;
  };
  const found: BodyOperation[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const method of ["post", "put", "patch", "delete"]) {
      const content = item[method]?.requestBody?.content["application/json"];
      if (!content) continue;
      const example = content.example ?? Object.values(content.examples ?? {})[0]?.value ?? {};
      found.push({ method: method.toUpperCase(), path, example });
    }
  }
  return found;
}

/** Each string in a JSON value, as its path from the root. */
function stringLeaves(value: unknown, at: string[] = []): string[][] {
  if (typeof value === "string") return [at];
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, child]) => stringLeaves(child, [...at, key]));
}

/** A copy of `value` with `suffix` appended to the string at `path`. */
function withSuffix(value: unknown, path: string[], suffix: string): unknown {
  const copy = structuredClone(value) as Record<string, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
  const last = path[path.length - 1]!;
  node[last] = `${node[last] as string}${suffix}`;
  return copy;
}

const FAKE_ID = "Unknown:00000000-0000-4000-8000-000000000000";
const operations = bodyOperations();
const UNSTORABLE = [
  ["an unpaired surrogate", "\ud800"],
  ["a NUL character", "\u0000"],
] as const;

describe.each(databases)("hostile input on %s", (kind) => {
  let sandbox: TestSandbox;
  let customerId: string;
  beforeAll(async () => {
    sandbox = await startSandbox(kind, { hostileRequests: true });
  });
  // Accounts are opened with their customer, one per currency: each test
  // gets its own customer, so its accounts start empty.
  beforeEach(async () => {
    customerId = (await createCustomer(sandbox.client)).id;
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  function send(op: BodyOperation, body: BodyInit, headers: Record<string, string>) {
    return sandbox.rawFetch(op.path.replace(/\{[^}]+\}/g, encodeURIComponent(FAKE_ID)), {
      method: op.method,
      headers: { "Content-Type": "application/json", ...headers },
      body,
    });
  }

  async function expectInvalidInput(res: Response, what: string) {
    expect(res.status, what).toBeLessThan(500);
    expect(res.status, what).toBe(400);
    const body = (await res.json()) as { code: string; details?: { errors?: { field: string }[] } };
    expect(body.code, what).toBe("INVALID_INPUT");
    return body;
  }

  it("finds the operations that take a body in openapi.yaml", () => {
    expect(operations.length).toBeGreaterThan(20);
    expect(operations.map((op) => `${op.method} ${op.path}`)).toContain("POST /cards");
  });

  it("answers a body labelled gzip that is not gzip with 400 INVALID_INPUT on every operation", async () => {
    for (const op of operations) {
      const res = await send(op, JSON.stringify(op.example), { "Content-Encoding": "gzip" });
      const body = await expectInvalidInput(res, `${op.method} ${op.path}`);
      expect(JSON.stringify(body)).toMatch(/gzip/);
    }
  });

  it("answers other undecodable or unknown encodings with 400 INVALID_INPUT", async () => {
    const op = operations.find((o) => o.path === "/customers")!;
    for (const encoding of ["deflate", "br", "foo"]) {
      const res = await send(op, JSON.stringify(op.example), { "Content-Encoding": encoding });
      await expectInvalidInput(res, encoding);
    }
    // A real gzip body is still read.
    const customer = {
      customerType: "INDIVIDUAL",
      fullName: "Zip Ped",
      email: "zip@example.com",
    };
    const zipped = await send(op, gzipSync(JSON.stringify(customer)), {
      "Content-Encoding": "gzip",
    });
    expect(zipped.status).toBe(201);
  });

  for (const [what, bad] of UNSTORABLE) {
    it(`refuses ${what} in any string of any body, naming the field`, async () => {
      for (const op of operations) {
        const leaves = stringLeaves(op.example);
        for (const leaf of leaves.length > 0 ? leaves : [["note"]]) {
          const body = leaves.length > 0 ? withSuffix(op.example, leaf, bad) : { note: bad };
          const label = `${op.method} ${op.path} ${leaf.join(".")}`;
          const answer = await expectInvalidInput(await send(op, JSON.stringify(body), {}), label);
          expect(answer.details?.errors?.[0]?.field, label).toBe(leaf.join("."));
        }
      }
    });
  }

  it("refuses an unpaired surrogate in POST /customers/external-accounts and stores nothing", async () => {
    const res = await sandbox.rawFetch("/customers/external-accounts", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        customerId,
        currency: "USD",
        accountInfo: {
          accountType: "USD_ACCOUNT",
          accountNumber: "000456789012",
          routingNumber: "021000021",
          beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Ada \ud800 Lovelace" },
        },
      }),
    });
    const body = await expectInvalidInput(res, "external account");
    expect(body.details?.errors?.[0]?.field).toBe("accountInfo.beneficiary.fullName");
    expect(await countRows(sandbox.server.data, q.selectFrom("ExternalAccount"))).toBe(0);
  });

  it("refuses an unpaired surrogate in POST /cards and issues no card", async () => {
    const account = await createAccount(sandbox.client, customerId, "USD", 1_000);
    const res = await sandbox.rawFetch("/cards", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        cardholderId: customerId,
        platformCardId: "card-\ud800-x",
        form: "VIRTUAL",
        fundingSources: [account.id],
      }),
    });
    const body = await expectInvalidInput(res, "card");
    expect(body.details?.errors?.[0]?.field).toBe("platformCardId");
    expect(await countRows(sandbox.server.data, q.selectFrom("Card"))).toBe(0);
  });

  it("refuses a NUL character in a customer's name the same way on both databases", async () => {
    const res = await sandbox.rawFetch("/customers", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        customerType: "INDIVIDUAL",
        fullName: "Nul\u0000 Byte",
        email: "nul@example.com",
      }),
    });
    const body = await expectInvalidInput(res, "customer");
    expect(body.details?.errors).toEqual([
      { field: "fullName", message: expect.stringMatching(/NUL/) },
    ]);
  });

  it("checks bodies read by the general reader too (another charset, compressed)", async () => {
    // UTF-16 carries an unpaired surrogate as is, with no \u escape.
    const utf16 = Buffer.from(
      JSON.stringify({
        customerType: "INDIVIDUAL",
        fullName: "Wide Chars",
        email: "wide@example.com",
      }).replace("Chars", "Ch\ud800rs"),
      "utf16le",
    );
    const wide = await sandbox.rawFetch("/customers", {
      method: "POST",
      headers: { "Content-Type": "application/json; charset=utf-16le" },
      body: utf16,
    });
    const wideBody = await expectInvalidInput(wide, "utf-16 body");
    expect(wideBody.details?.errors?.[0]?.field).toBe("fullName");

    const zipped = await sandbox.rawFetch("/customers", {
      method: "POST",
      headers: { "Content-Type": "application/json", "Content-Encoding": "gzip" },
      body: gzipSync(
        JSON.stringify({
          customerType: "INDIVIDUAL",
          fullName: "Zip\u0000 Nul",
          email: "zipnul@example.com",
        }),
      ),
    });
    const zippedBody = await expectInvalidInput(zipped, "gzip body");
    expect(zippedBody.details?.errors?.[0]?.field).toBe("fullName");
  });

  it("refuses a NUL character in a query or path parameter, naming it", async () => {
    for (const [url, field] of [
      ["/customers?platformCustomerId=ab%00c", "platformCustomerId"],
      ["/sandbox/webhooks/events?objectId=%00", "objectId"],
      ["/agents/device-codes/ab%00c/redeem", "path"],
    ] as const) {
      const method = url.endsWith("/redeem") ? "POST" : "GET";
      const body = await expectInvalidInput(await sandbox.rawFetch(url, { method }), url);
      expect(body.details?.errors?.[0]?.field, url).toBe(field);
    }
  });

  it("keeps well-formed text outside the Basic Multilingual Plane", async () => {
    const { data, response } = await sandbox.client.POST("/customers", {
      body: {
        customerType: "INDIVIDUAL",
        fullName: "Emoji 😀 Ünïcödé",
        email: "emoji@example.com",
      },
    });
    expect(response.status).toBe(201);
    expect(data && "fullName" in data && data.fullName).toBe("Emoji 😀 Ünïcödé");
  });

  describe("bodies keep their JSON types", () => {
    it('refuses PATCH /config with a boolean umaDomain instead of storing "false"', async () => {
      const before = await sandbox.client.GET("/config");
      const res = await sandbox.rawFetch("/config", {
        method: "PATCH",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ umaDomain: false }),
      });
      const body = await expectInvalidInput(res, "config");
      expect(body.details?.errors?.map((e) => e.field)).toContain("umaDomain");
      const after = await sandbox.client.GET("/config");
      expect(after.data?.umaDomain).toBe(before.data?.umaDomain);
    });

    it("refuses a fund of `true` and leaves the balance as it was", async () => {
      const account = await createAccount(sandbox.client, customerId, "USD", 500);
      for (const amount of [true, "100", [100]]) {
        const res = await sandbox.rawFetch(`/sandbox/internal-accounts/${account.id}/fund`, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ amount }),
        });
        const body = await expectInvalidInput(res, JSON.stringify(amount));
        expect(body.details?.errors?.map((e) => e.field)).toContain("amount");
      }
      expect(await balanceOf(sandbox.client, account.id)).toBe(500);
    });

    it("still coerces query parameters, which are strings on the wire", async () => {
      await createCustomer(sandbox.client, { lastName: "Query" });
      const { data, response } = await sandbox.client.GET("/customers", {
        params: { query: { limit: 1 } },
      });
      expect(response.status).toBe(200);
      expect(data?.data).toHaveLength(1);
      expect(data?.hasMore).toBe(true);
      const raw = await sandbox.rawFetch("/customers?limit=2");
      expect(((await raw.json()) as { data: unknown[] }).data).toHaveLength(2);
      await expectInvalidInput(await sandbox.rawFetch("/customers?limit=two"), "limit=two");
    });
  });
});
