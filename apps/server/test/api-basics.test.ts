import { createServer, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";

describe.each(databases)("API basics on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("rejects a request without credentials with the Error object", async () => {
    const res = await sandbox.rawFetch("/customers", { auth: null });
    expect(res.status).toBe(401);
    expect(res.headers.get("www-authenticate")).toMatch(/^Basic/);
    expect(await res.json()).toMatchObject({
      status: 401,
      code: "UNAUTHORIZED",
      message: expect.any(String),
    });
  });

  it("rejects a wrong secret and an unknown token id alike", async () => {
    const { tokenId } = sandbox.credentials;
    for (const user of [
      `${tokenId}:wrong-secret`,
      `no-such-token:${sandbox.credentials.secret}`,
      "nocolon",
    ]) {
      const res = await sandbox.rawFetch("/customers", {
        auth: `Basic ${Buffer.from(user).toString("base64")}`,
      });
      expect(res.status).toBe(401);
      expect((await res.json()).code).toBe("UNAUTHORIZED");
    }
    const bearer = await sandbox.rawFetch("/customers", { auth: "Bearer abc" });
    expect(bearer.status).toBe(401);
  });

  it("accepts the right credentials", async () => {
    const res = await sandbox.rawFetch("/customers");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ data: [], hasMore: false });
  });

  it("answers an unknown route with 404 NOT_FOUND", async () => {
    const res = await sandbox.rawFetch("/no-such-thing");
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ status: 404, code: "NOT_FOUND" });
    // A known path with another method is a 405 (operations-and-health.test.ts).
    const wrongMethod = await sandbox.rawFetch("/customers", { method: "DELETE" });
    expect(wrongMethod.status).toBe(405);
  });

  it("answers malformed JSON with 400 INVALID_INPUT", async () => {
    const res = await sandbox.rawFetch("/customers", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: '{"customerType": "INDIVIDUAL",',
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    expect(JSON.stringify(body)).not.toMatch(/at .*\.js/); // no stack trace
  });

  it("reads JSON bodies with a charset, sent in chunks, or neither an object nor an array", async () => {
    const customer = {
      customerType: "INDIVIDUAL",
      fullName: "Ada Body",
      email: "ada.body@example.com",
    };
    const withCharset = await sandbox.rawFetch("/customers", {
      method: "POST",
      headers: { "Content-Type": "application/json; charset=UTF-8" },
      body: JSON.stringify(customer),
    });
    expect(withCharset.status).toBe(201);

    // No Content-Length: the body arrives chunked.
    const bytes = new TextEncoder().encode(JSON.stringify(customer));
    const chunked = await sandbox.rawFetch("/customers", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(bytes.slice(0, 10));
          controller.enqueue(bytes.slice(10));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(201);

    for (const body of ['"a string"', "42", "  null"]) {
      const res = await sandbox.rawFetch("/customers", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body,
      });
      expect(res.status, body).toBe(400);
      expect(await res.json()).toMatchObject({ code: "INVALID_INPUT" });
    }

    const tooLarge = await sandbox.rawFetch("/customers", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ ...customer, padding: "x".repeat(1024 * 1024) }),
    });
    expect(tooLarge.status).toBe(400);
    expect(await tooLarge.json()).toMatchObject({
      code: "INVALID_INPUT",
      message: "Request body is too large",
    });
  });

  it("answers a schema violation with 400 INVALID_INPUT naming the field", async () => {
    const res = await sandbox.rawFetch("/customers", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        customerType: "INDIVIDUAL",
        fullName: "Ada Lovelace",
        email: "not-an-email",
      }),
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.code).toBe("INVALID_INPUT");
    const paths = (body.details.errors as { field: string }[]).map((e) => e.field);
    expect(paths.some((p) => p.includes("email"))).toBe(true);
  });

  it("rejects an invalid pagination limit and an unknown cursor", async () => {
    const big = await sandbox.rawFetch("/customers?limit=1000");
    expect(big.status).toBe(400);
    const cursor = await sandbox.rawFetch("/customers?cursor=garbage");
    expect(cursor.status).toBe(400);
    expect((await cursor.json()).code).toBe("INVALID_INPUT");
  });

  it("serves the spec, naming this sandbox as its server, and the rendered reference", async () => {
    const spec = await fetch(`${sandbox.server.origin}/openapi.yaml`);
    expect(spec.status).toBe(200);
    const text = await spec.text();
    expect(text).toMatch(/^openapi: 3\.1/m);
    expect(text).toContain(`servers:\n  - url: "${sandbox.server.baseUrl}"\n`);
    expect(text).not.toContain("url: http://localhost:3000/");
    const docs = await fetch(`${sandbox.server.origin}/docs`);
    expect(docs.status).toBe(200);
    const html = await docs.text();
    expect(html).toContain("<title>Payments Platform Sandbox API</title>");
    expect(html).toContain('id="redoc"');
  });

  it("sets a trace id on every response", async () => {
    const res = await sandbox.rawFetch("/customers");
    expect(res.headers.get("x-trace-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe("the served spec behind a proxy", () => {
  it("names PUBLIC_BASE_URL as its server", async () => {
    // The server's origin is then the proxy's, so it listens on a port chosen here.
    const port = await freePort();
    const sandbox = await startSandbox("sqlite", {
      env: { PORT: String(port), PUBLIC_BASE_URL: "https://sandbox.example.test/" },
    });
    try {
      const text = await (await fetch(`http://127.0.0.1:${port}/openapi.yaml`)).text();
      expect(text).toContain('servers:\n  - url: "https://sandbox.example.test/2025-10-13"\n');
    } finally {
      await sandbox.stop();
    }
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
