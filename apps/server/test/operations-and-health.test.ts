import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { q } from "../src/db/query.js";
import { parseDatabaseUrl, pgPoolConfig } from "../src/db/client.js";
import { hashSecret } from "../src/platform/api-tokens.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { killAll, logLines, startProcess } from "./support/sandbox-process.js";

/** Runs one statement on the sandbox's database from outside the server. */
async function execute(sandbox: TestSandbox, sql: string): Promise<void> {
  const target = parseDatabaseUrl(sandbox.database.url);
  if (target.provider === "sqlite") {
    const db = new Database(target.location);
    try {
      db.exec(sql);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client(pgPoolConfig(target));
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

describe.each(databases)("operational behaviour on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("answers a known path with an unsupported method 405 METHOD_NOT_ALLOWED and Allow", async () => {
    const res = await sandbox.rawFetch("/customers", { method: "PUT" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")?.split(/,\s*/).sort()).toEqual(["GET", "POST"]);
    expect(await res.json()).toMatchObject({ status: 405, code: "METHOD_NOT_ALLOWED" });
    // An unknown path stays a 404.
    const unknown = await sandbox.rawFetch("/no-such-thing", { method: "PUT" });
    expect(unknown.status).toBe(404);
  });

  it("stops accepting a changed or deleted API secret at once", async () => {
    const { tokenId, secret } = sandbox.credentials;
    const auth = (s: string) => `Basic ${Buffer.from(`${tokenId}:${s}`).toString("base64")}`;
    // Accepted (and remembered) with the current secret.
    expect((await sandbox.rawFetch("/customers", { auth: auth(secret) })).status).toBe(200);
    expect((await sandbox.rawFetch("/customers", { auth: auth(secret) })).status).toBe(200);

    // Another process (or a restart with a new SANDBOX_TOKEN_SECRET) re-hashes it.
    const next = `${secret}-rotated`;
    const hashed = await hashSecret(next);
    await sandbox.server.data.execute(
      q
        .updateTable("ApiToken")
        .set({ secretSalt: hashed.salt, secretHash: hashed.hash })
        .where("id", "=", tokenId),
    );
    expect((await sandbox.rawFetch("/customers", { auth: auth(secret) })).status).toBe(401);
    expect((await sandbox.rawFetch("/customers", { auth: auth(next) })).status).toBe(200);

    // Revoked: the row is gone.
    await sandbox.server.data.execute(q.deleteFrom("ApiToken").where("id", "=", tokenId));
    expect((await sandbox.rawFetch("/customers", { auth: auth(next) })).status).toBe(401);
  });
});

describe.each(databases)("GET /healthz on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("answers ok, without credentials, while the database answers; 503 with the reason when not", async () => {
    const url = `${sandbox.server.origin}/healthz`;
    const ok = await fetch(url);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ status: "ok" });

    // The sandbox's tables are gone from under it.
    await execute(
      sandbox,
      kind === "sqlite"
        ? `DROP TABLE "ApiToken"; DROP TABLE "Platform"`
        : `DROP TABLE "Platform" CASCADE`,
    );
    const down = await fetch(url);
    expect(down.status).toBe(503);
    const body = (await down.json()) as { status: string; reason: string };
    expect(body.status).toBe("unavailable");
    expect(body.reason).toMatch(/^database: .*Platform/);
  });
});

describe("request logs", () => {
  afterEach(killAll);

  it("show why a request was refused and never an agent's device code", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandbox-logs-"));
    try {
      const credentials = { SANDBOX_TOKEN_ID: "log-token", SANDBOX_TOKEN_SECRET: "log-secret" };
      const s = await startProcess({
        DATABASE_URL: `file:${join(dir, "db.sqlite")}`,
        ...credentials,
      });
      const call = (path: string, init: RequestInit = {}, auth = true) =>
        fetch(`${s.baseUrl}${path}`, {
          ...init,
          headers: {
            "Content-Type": "application/json",
            ...(auth
              ? { Authorization: `Basic ${Buffer.from("log-token:log-secret").toString("base64")}` }
              : {}),
          },
        });

      expect((await call("/customers", {}, false)).status).toBe(401);
      expect((await call("/customers", { method: "POST", body: "{}" })).status).toBe(400);
      const wrongCode = "wrong-device-code-5d1e";
      expect(
        (await call(`/agents/device-codes/${wrongCode}/redeem`, { method: "POST" })).status,
      ).toBe(404);

      const customer = (await (
        await call("/customers", {
          method: "POST",
          body: JSON.stringify({
            customerType: "INDIVIDUAL",
            fullName: "Ada Lovelace",
            email: "ada@example.com",
          }),
        })
      ).json()) as { id: string };
      const agent = (await (
        await call("/agents", {
          method: "POST",
          body: JSON.stringify({
            name: "Logged agent",
            customerId: customer.id,
            policy: {
              permissions: ["VIEW_TRANSACTIONS"],
              defaultExecutionMode: "AUTO",
              spendingLimits: { currency: "USD", perTransactionLimit: 1000 },
            },
          }),
        })
      ).json()) as { deviceCode: { code: string } };
      const code = agent.deviceCode.code;
      const redeem = `/agents/device-codes/${code}/redeem`;
      // Redeemed without credentials, as the agent software does.
      expect((await call(redeem, { method: "POST" }, false)).status).toBe(200);
      // A second redemption fails; its code must not show either.
      expect((await call(redeem, { method: "POST" }, false)).status).toBe(400);
      expect(await s.stop()).toBe(0);

      const output = s.output();
      expect(output).not.toContain(code);
      expect(output).not.toContain(code.toLowerCase());
      expect(output).not.toContain(wrongCode);
      const requests = logLines(output).filter((l) => l.req !== undefined) as {
        req: { method: string; path: string };
        res: { statusCode: number; code?: string };
      }[];
      const codes = requests.map((l) => [l.req.method, l.req.path, l.res.statusCode, l.res.code]);
      expect(codes).toEqual(
        expect.arrayContaining([
          ["GET", "/2025-10-13/customers", 401, "UNAUTHORIZED"],
          ["POST", "/2025-10-13/customers", 400, "INVALID_INPUT"],
          ["POST", "/2025-10-13/agents/device-codes/[code]/redeem", 404, "REFERENCE_NOT_FOUND"],
          ["POST", "/2025-10-13/agents/device-codes/[code]/redeem", 200, undefined],
          ["POST", "/2025-10-13/agents/device-codes/[code]/redeem", 400, "INVALID_INPUT"],
          ["POST", "/2025-10-13/customers", 201, undefined],
        ]),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
