import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type SandboxClient, type Schemas } from "@payments-sandbox/client";
import { q } from "../src/db/query.js";
import { openApiPath } from "../src/paths.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  balanceOf,
  countRows,
  createAccount,
  createBankAccount,
  createCustomer,
} from "./money-helpers.js";

// Every operation of openapi.yaml, called with a token that has one
// permission only: refused exactly when its `x-permission` names another one,
// with the status it declares and a reason naming the permission, and let
// through (to whatever else it answers) when the token has it. The list comes
// from openapi.yaml, so an operation added there is checked here at once.

type Permission = Schemas["Permission"];
const PERMISSIONS: Permission[] = ["VIEW", "TRANSACT", "MANAGE"];

interface SpecOperation {
  operationId: string;
  "x-permission": Permission | "NONE";
  responses: Record<string, unknown>;
}

interface Called {
  operationId: string;
  method: string;
  /** The path with every parameter filled in. */
  path: string;
  /** Served outside the versioned API (from its own origin). */
  outside: boolean;
  permission: Permission | "NONE";
  /** The status of a refusal: the operation's 403, else its 401. */
  refusal: number;
}

const spec = parse(readFileSync(openApiPath, "utf8")) as {
  paths: Record<string, Record<string, unknown> & { servers?: unknown }>;
};
const METHODS = ["get", "put", "post", "delete", "patch"];
const UNKNOWN_ID = "Unknown:00000000-0000-4000-8000-000000000000";

const operations: Called[] = Object.entries(spec.paths).flatMap(([path, item]) =>
  METHODS.filter((method) => item[method] !== undefined).map((method) => {
    const op = item[method] as SpecOperation;
    return {
      operationId: op.operationId,
      method: method.toUpperCase(),
      path: path.replace(/\{[^}]+\}/g, encodeURIComponent(UNKNOWN_ID)),
      outside: item.servers !== undefined,
      permission: op["x-permission"],
      refusal: "403" in op.responses ? 403 : 401,
    };
  }),
);

interface Answer {
  status: number;
  body: { status?: number; code?: string; reason?: string; details?: { permission?: string } };
}

describe.each(databases)("API token permissions on %s", (kind) => {
  let sandbox: TestSandbox;
  const secrets = new Map<Permission, string>();

  async function createToken(
    permissions: Permission[],
  ): Promise<{ clientId: string; clientSecret: string }> {
    const { data, error } = await sandbox.client.POST("/tokens", {
      body: { name: `only ${permissions.join(" ")} ${randomUUID()}`, permissions },
    });
    if (!data?.clientSecret) throw new Error(`token not created: ${JSON.stringify(error)}`);
    return { clientId: data.clientId, clientSecret: data.clientSecret };
  }

  const basic = (token: { clientId: string; clientSecret: string }) =>
    `Basic ${Buffer.from(`${token.clientId}:${token.clientSecret}`).toString("base64")}`;

  const clientOf = (token: { clientId: string; clientSecret: string }): SandboxClient =>
    createClient({
      baseUrl: sandbox.server.baseUrl,
      tokenId: token.clientId,
      secret: token.clientSecret,
    });

  beforeAll(async () => {
    // Every operation is called with placeholder ids and bodies, some of which
    // production's own contract refuses: only the permission check is asserted.
    sandbox = await startSandbox(kind, { hostileRequests: true });
    for (const permission of PERMISSIONS) {
      secrets.set(permission, basic(await createToken([permission])));
    }
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  /** The operation called as a partner would, with an empty JSON body where it takes one. */
  async function call(op: Called, authorization: string): Promise<Answer> {
    const url = op.outside
      ? `${sandbox.server.origin}${op.path}`
      : `${sandbox.server.baseUrl}${op.path}`;
    const hasBody = op.method !== "GET" && op.method !== "DELETE";
    const response = await fetch(url, {
      method: op.method,
      headers: {
        authorization,
        ...(hasBody ? { "content-type": "application/json" } : {}),
      },
      ...(hasBody ? { body: "{}" } : {}),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text === "" ? {} : (JSON.parse(text) as Answer["body"]),
    };
  }

  it("knows the permission of every operation of openapi.yaml", () => {
    expect(operations.length).toBeGreaterThan(150);
    for (const op of operations) {
      expect([...PERMISSIONS, "NONE"], op.operationId).toContain(op.permission);
    }
  });

  it.each(PERMISSIONS)(
    "refuses a %s-only token exactly the operations that need another permission",
    async (held) => {
      const authorization = secrets.get(held)!;
      const wrong: string[] = [];
      for (const op of operations) {
        const answer = await call(op, authorization);
        const refused = answer.body.reason === `Missing permission: ${op.permission}`;
        if (op.permission === "NONE" || op.permission === held) {
          // Let through: whatever it answers (an unknown id, an empty body),
          // it is not a permission refusal.
          if (answer.body.reason?.startsWith("Missing permission") === true) {
            wrong.push(`${op.operationId}: refused ${JSON.stringify(answer.body)}`);
          }
        } else {
          const expected = {
            status: op.refusal,
            code: op.refusal === 403 ? "FORBIDDEN" : "UNAUTHORIZED",
            permission: op.permission,
          };
          const got = {
            status: answer.status,
            code: answer.body.code,
            permission: answer.body.details?.permission,
          };
          if (!refused || JSON.stringify(got) !== JSON.stringify(expected)) {
            wrong.push(`${op.operationId}: ${answer.status} ${JSON.stringify(answer.body)}`);
          }
        }
      }
      expect(wrong).toEqual([]);
    },
    // The first request to each path compiles its validator: on a busy
    // two-core machine, minutes for all of them.
    600_000,
  );

  it("refuses a VIEW token's payout before anything is written or an Idempotency-Key is read", async () => {
    const viewer = clientOf(await createToken(["VIEW"]));
    const payer = clientOf(await createToken(["TRANSACT"]));
    const customerId = (await createCustomer(sandbox.client)).id;
    const account = await createAccount(sandbox.client, customerId, "USD", 10_000);
    const bank = await createBankAccount(sandbox.client, customerId, "000");
    const body = { source: { accountId: account.id }, destination: { accountId: bank.id } };
    const key = randomUUID();
    const paid = await payer.POST("/transfer-out", {
      body: { ...body, amount: 1_000 },
      params: { header: { "Idempotency-Key": key } },
    });
    expect(paid.response.status).toBe(201);
    const transactions = () =>
      countRows(
        sandbox.server.data,
        q.selectFrom("Transaction").where("customerId", "=", customerId),
      );
    const before = await transactions();

    // The same key: refused, not given the TRANSACT token's stored answer.
    for (const amount of [1_000, 2_000]) {
      const out = await viewer.POST("/transfer-out", {
        body: { ...body, amount },
        params: { header: { "Idempotency-Key": key } },
      });
      expect(out.response.status).toBe(401);
      expect(out.error).toMatchObject({
        code: "UNAUTHORIZED",
        reason: "Missing permission: TRANSACT",
        details: { permission: "TRANSACT" },
      });
    }
    const pulled = await viewer.POST("/transfer-in", {
      body: { source: { accountId: bank.id }, destination: { accountId: account.id }, amount: 500 },
    });
    expect(pulled.error).toMatchObject({ status: 401, reason: "Missing permission: TRANSACT" });
    expect(await balanceOf(sandbox.client, account.id)).toBe(9_000);
    expect(await transactions()).toBe(before);
  });

  it("keeps the webhook endpoint from a token that cannot manage the platform", async () => {
    const before = (await sandbox.client.GET("/config", {})).data!;
    for (const permissions of [["VIEW"], ["VIEW", "TRANSACT"]] satisfies Permission[][]) {
      const token = clientOf(await createToken(permissions));
      // It can read the configuration, not change it.
      expect((await token.GET("/config", {})).data).toEqual(before);
      const repointed = await token.PATCH("/config", {
        body: { webhookEndpoint: "https://attacker.example/hook" },
      });
      expect(repointed.error).toMatchObject({
        status: 401,
        code: "UNAUTHORIZED",
        reason: "Missing permission: MANAGE",
      });
    }
    expect((await sandbox.client.GET("/config", {})).data).toEqual(before);
  });
});
