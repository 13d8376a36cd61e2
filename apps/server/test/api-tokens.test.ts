import { randomUUID } from "node:crypto";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type SandboxClient, type Schemas } from "@payments-sandbox/client";
import { q } from "../src/db/query.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { createAccount, createBankAccount, createCustomer, executeQuote } from "./money-helpers.js";

type ApiToken = Schemas["ApiToken"];
type Permission = Schemas["Permission"];

/** Every line the server logs, at every level, to look for secrets in. */
function capturedLog() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString("utf8"));
      done();
    },
  });
  return { lines, log: pino({ level: "trace" }, stream) };
}

describe.each(databases)("API tokens on %s", (kind) => {
  let sandbox: TestSandbox;
  const logged = capturedLog();
  beforeAll(async () => {
    sandbox = await startSandbox(kind, { log: logged.log });
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  async function createToken(
    permissions: Permission[],
    name = `token ${randomUUID()}`,
    client: SandboxClient = sandbox.client,
  ): Promise<ApiToken & { clientSecret: string }> {
    const { data, error, response } = await client.POST("/tokens", {
      body: { name, permissions },
    });
    if (!data?.clientSecret) throw new Error(`token not created: ${JSON.stringify(error)}`);
    expect(response.status).toBe(201);
    return { ...data, clientSecret: data.clientSecret };
  }

  /** A client that authenticates with the token, as a partner's server would. */
  const clientOf = (token: { clientId: string; clientSecret: string }) =>
    createClient({
      baseUrl: sandbox.server.baseUrl,
      tokenId: token.clientId,
      secret: token.clientSecret,
    });

  it("creates a token whose secret is shown once, works for the same platform, and is revoked by delete", async () => {
    const token = await createToken(["VIEW", "MANAGE"], "Onboarding service");
    expect(token).toMatchObject({ name: "Onboarding service", permissions: ["VIEW", "MANAGE"] });
    // The id is the Basic user name: the contract's clientId, the same value.
    expect(token.clientId).toBe(token.id);
    expect(token.id).not.toContain(":");
    expect(token.clientSecret.length).toBeGreaterThanOrEqual(40);
    expect(token.updatedAt).toBe(token.createdAt);

    // It acts for the same platform: what it makes, the platform's token sees.
    const worker = clientOf(token);
    const made = await worker.POST("/customers", {
      body: { customerType: "INDIVIDUAL", fullName: "Tok En", email: "tok.en@example.com" },
    });
    expect(made.response.status).toBe(201);
    const seen = await sandbox.client.GET("/customers/{customerId}", {
      params: { path: { customerId: made.data!.id! } },
    });
    expect(seen.data).toMatchObject({ fullName: "Tok En" });

    // Read back, alone or in the list: never the secret.
    const got = await sandbox.client.GET("/tokens/{tokenId}", {
      params: { path: { tokenId: token.id } },
    });
    const { clientSecret, ...shown } = token;
    expect(got.data).toEqual(shown);
    const listed = await worker.GET("/tokens", {
      params: { query: { name: "Onboarding service" } },
    });
    expect(listed.data).toMatchObject({ data: [shown], hasMore: false, totalCount: 1 });
    expect(JSON.stringify(listed.data)).not.toContain(clientSecret);

    // Stored as a hash: the secret is in no column.
    const row = await sandbox.server.data.one(
      q.selectFrom("ApiToken").selectAll().where("id", "=", token.id),
    );
    expect(row).toBeDefined();
    expect(JSON.stringify(row)).not.toContain(clientSecret);

    const deleted = await sandbox.client.DELETE("/tokens/{tokenId}", {
      params: { path: { tokenId: token.id } },
    });
    expect(deleted.response.status).toBe(204);
    const refused = await worker.GET("/customers", {});
    expect(refused.response.status).toBe(401);
    expect(refused.error).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    const gone = await sandbox.client.GET("/tokens/{tokenId}", {
      params: { path: { tokenId: token.id } },
    });
    expect(gone.error).toMatchObject({ status: 404, code: "TOKEN_NOT_FOUND" });
    const again = await sandbox.client.DELETE("/tokens/{tokenId}", {
      params: { path: { tokenId: token.id } },
    });
    expect(again.error).toMatchObject({ status: 404, code: "TOKEN_NOT_FOUND" });
  });

  it("never logs a secret, at any log level", async () => {
    const token = await createToken(["VIEW"]);
    const worker = clientOf(token);
    expect((await worker.GET("/tokens", {})).response.status).toBe(200);
    await sandbox.client.DELETE("/tokens/{tokenId}", { params: { path: { tokenId: token.id } } });
    expect((await worker.GET("/tokens", {})).response.status).toBe(401);
    expect(logged.lines.length).toBeGreaterThan(0);
    for (const line of logged.lines) {
      expect(line).not.toContain(token.clientSecret);
      expect(line).not.toContain(sandbox.credentials.secret);
    }
  });

  it("revokes a deleted token at once on every server process of the database", async () => {
    const second = await sandbox.startAnother();
    try {
      const token = await createToken(["VIEW"]);
      const onSecond = createClient({
        baseUrl: second.server.baseUrl,
        tokenId: token.clientId,
        secret: token.clientSecret,
      });
      // The second process has checked (and remembered) the secret...
      expect((await onSecond.GET("/tokens", {})).response.status).toBe(200);
      expect((await onSecond.GET("/tokens", {})).response.status).toBe(200);
      // ...and refuses it as soon as the first one deletes the token.
      const deleted = await sandbox.client.DELETE("/tokens/{tokenId}", {
        params: { path: { tokenId: token.id } },
      });
      expect(deleted.response.status).toBe(204);
      const refused = await onSecond.GET("/tokens", {});
      expect(refused.error).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    } finally {
      await second.stop();
    }
  });

  it("answers requests made at once with many tokens, each as its own platform, refusing only the bad ones", async () => {
    // Tokens arriving together are read together (one statement a turn):
    // no request may get another's platform, and a bad one fails alone.
    const worker = clientOf(await createToken(["VIEW"]));
    const other = await sandbox.otherPlatformClient();
    const wrongSecret = createClient({
      baseUrl: sandbox.server.baseUrl,
      tokenId: sandbox.credentials.tokenId,
      secret: "not the secret",
    });
    const unknown = createClient({
      baseUrl: sandbox.server.baseUrl,
      tokenId: randomUUID(),
      secret: sandbox.credentials.secret,
    });
    // PostgreSQL cannot take a NUL in text: such an id must fail alone too.
    const nul = createClient({
      baseUrl: sandbox.server.baseUrl,
      tokenId: `${sandbox.credentials.tokenId}\u0000`,
      secret: sandbox.credentials.secret,
    });
    const callers = [
      { client: sandbox.client, ours: true },
      { client: nul, ours: undefined },
      { client: worker, ours: true },
      { client: other, ours: false },
      { client: wrongSecret, ours: undefined },
      { client: unknown, ours: undefined },
    ];
    const sent = Array.from({ length: 42 }, (_, i) => callers[i % callers.length]!);
    const tokenId = sandbox.credentials.tokenId;
    const answers = await Promise.all(
      sent.map(({ client }) => client.GET("/tokens/{tokenId}", { params: { path: { tokenId } } })),
    );
    answers.forEach((answer, i) => {
      const { ours } = sent[i]!;
      if (ours === true) expect(answer.data?.id).toBe(tokenId);
      else if (ours === false)
        expect(answer.error).toMatchObject({ status: 404, code: "TOKEN_NOT_FOUND" });
      else expect(answer.error).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    });
  });

  it("gives the sandbox's own token every permission", async () => {
    const own = await sandbox.client.GET("/tokens/{tokenId}", {
      params: { path: { tokenId: sandbox.credentials.tokenId } },
    });
    expect(own.data).toMatchObject({
      id: sandbox.credentials.tokenId,
      clientId: sandbox.credentials.tokenId,
      name: "Sandbox token",
      permissions: ["VIEW", "TRANSACT", "MANAGE"],
    });
    expect(own.data).not.toHaveProperty("clientSecret");
  });

  describe("permissions", () => {
    /** A funded USD account and a EUR IBAN of a new customer, made by the platform's token. */
    async function quoteParties() {
      const customer = await createCustomer(sandbox.client);
      const account = await createAccount(sandbox.client, customer.id, "USD", 20_000);
      const iban = await createBankAccount(sandbox.client, customer.id, "100", "EUR");
      return {
        source: { sourceType: "ACCOUNT" as const, accountId: account.id },
        destination: { destinationType: "ACCOUNT" as const, accountId: iban.id },
        lockedCurrencySide: "SENDING" as const,
        lockedCurrencyAmount: 5_000,
      };
    }

    it("needs TRANSACT to create or execute a quote (403 FORBIDDEN without it)", async () => {
      const body = await quoteParties();
      const viewer = clientOf(await createToken(["VIEW", "MANAGE"]));
      const refused = await viewer.POST("/quotes", { body });
      expect(refused.response.status).toBe(403);
      expect(refused.error).toMatchObject({ status: 403, code: "FORBIDDEN" });
      expect(refused.error?.message).toContain("TRANSACT");

      const payer = clientOf(await createToken(["TRANSACT"]));
      const quote = await payer.POST("/quotes", { body });
      expect(quote.response.status).toBe(201);
      const quoteId = quote.data!.id;

      // The viewer may read the quote, not release it.
      const read = await viewer.GET("/quotes/{quoteId}", { params: { path: { quoteId } } });
      expect(read.data?.status).toBe("PENDING");
      const notExecuted = await executeQuote(viewer, quoteId);
      expect(notExecuted.error).toMatchObject({ status: 403, code: "FORBIDDEN" });
      const stillPending = await sandbox.client.GET("/quotes/{quoteId}", {
        params: { path: { quoteId } },
      });
      expect(stillPending.data?.status).toBe("PENDING");

      const executed = await executeQuote(payer, quoteId);
      expect(executed.response.status).toBe(200);
      expect(executed.data?.id).toBe(quoteId);
    });

    it("refuses before an Idempotency-Key is looked up, so a kept answer is not replayed to it", async () => {
      const body = await quoteParties();
      const key = randomUUID();
      const first = await sandbox.client.POST("/quotes", {
        params: { header: { "Idempotency-Key": key } },
        body,
      });
      expect(first.response.status).toBe(201);
      const viewer = clientOf(await createToken(["VIEW"]));
      const replayed = await viewer.POST("/quotes", {
        params: { header: { "Idempotency-Key": key } },
        body,
      });
      expect(replayed.error).toMatchObject({ status: 403, code: "FORBIDDEN" });
      // The key still answers its owner with the kept quote.
      const again = await sandbox.client.POST("/quotes", {
        params: { header: { "Idempotency-Key": key } },
        body,
      });
      expect(again.data?.id).toBe(first.data!.id);
    });

    it("needs MANAGE to create or delete tokens, so a token cannot widen its own rights", async () => {
      const viewer = clientOf(await createToken(["VIEW", "TRANSACT"]));
      const widened = await viewer.POST("/tokens", {
        body: { name: "escalation", permissions: ["VIEW", "TRANSACT", "MANAGE"] },
      });
      // The live token operations declare no 403: the refusal is their 401.
      expect(widened.response.status).toBe(401);
      expect(widened.error).toMatchObject({
        status: 401,
        code: "UNAUTHORIZED",
        reason: "Missing permission: MANAGE",
      });
      expect(widened.error?.message).toContain("MANAGE");
      const listed = await sandbox.client.GET("/tokens", {
        params: { query: { name: "escalation" } },
      });
      expect(listed.data?.totalCount).toBe(0);

      const other = await createToken(["VIEW"]);
      const notDeleted = await viewer.DELETE("/tokens/{tokenId}", {
        params: { path: { tokenId: other.id } },
      });
      expect(notDeleted.error).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
      // Reading tokens needs no permission the viewer lacks.
      const read = await viewer.GET("/tokens/{tokenId}", {
        params: { path: { tokenId: other.id } },
      });
      expect(read.data?.id).toBe(other.id);

      // A MANAGE token may, and what it makes works.
      const admin = clientOf(await createToken(["VIEW", "MANAGE"]));
      const made = await createToken(["VIEW"], "made by admin", admin);
      expect((await clientOf(made).GET("/config", {})).response.status).toBe(200);
      const removed = await admin.DELETE("/tokens/{tokenId}", {
        params: { path: { tokenId: other.id } },
      });
      expect(removed.response.status).toBe(204);
    });

    it("grants only permissions the creating token has itself", async () => {
      const admin = clientOf(await createToken(["VIEW", "MANAGE"]));
      for (const [permissions, missing] of [
        [["TRANSACT"], "TRANSACT"],
        [["VIEW", "MANAGE", "TRANSACT"], "TRANSACT"],
      ] satisfies [Permission[], Permission][]) {
        const name = `wider ${randomUUID()}`;
        const widened = await admin.POST("/tokens", { body: { name, permissions } });
        // POST /tokens declares no 403: the refusal is its 401, naming the permission.
        expect(widened.response.status).toBe(401);
        expect(widened.error).toMatchObject({
          status: 401,
          code: "UNAUTHORIZED",
          reason: `Missing permission: ${missing}`,
          details: { permission: missing },
        });
        const listed = await sandbox.client.GET("/tokens", { params: { query: { name } } });
        expect(listed.data?.totalCount).toBe(0);
      }
      // A MANAGE-only token may make a token with MANAGE alone, or with nothing.
      const manager = clientOf(await createToken(["MANAGE"]));
      const notViewer = await manager.POST("/tokens", {
        body: { name: "viewer", permissions: ["VIEW"] },
      });
      expect(notViewer.error).toMatchObject({ status: 401, reason: "Missing permission: VIEW" });
      const peer = await createToken(["MANAGE"], `peer ${randomUUID()}`, manager);
      expect(peer.permissions).toEqual(["MANAGE"]);
      expect((await createToken([], `empty ${randomUUID()}`, manager)).permissions).toEqual([]);
      // Its equal, made by the admin, works.
      const same = await createToken(["VIEW", "MANAGE"], `same ${randomUUID()}`, admin);
      expect((await clientOf(same).GET("/config", {})).response.status).toBe(200);
    });

    it("keeps each permission once, in the order given", async () => {
      const token = await createToken(["TRANSACT", "VIEW", "TRANSACT", "VIEW"]);
      expect(token.permissions).toEqual(["TRANSACT", "VIEW"]);
      const none = await createToken([]);
      expect(none.permissions).toEqual([]);
      const body = await quoteParties();
      const refused = await clientOf(none).POST("/quotes", { body });
      expect(refused.error).toMatchObject({ status: 403, code: "FORBIDDEN" });
    });
  });

  it("does not let a token delete itself (400), so a platform always keeps one", async () => {
    const own = await sandbox.client.DELETE("/tokens/{tokenId}", {
      params: { path: { tokenId: sandbox.credentials.tokenId } },
    });
    expect(own.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    const admin = await createToken(["VIEW", "MANAGE"]);
    const self = await clientOf(admin).DELETE("/tokens/{tokenId}", {
      params: { path: { tokenId: admin.id } },
    });
    expect(self.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    expect((await clientOf(admin).GET("/tokens", {})).response.status).toBe(200);
    // Another token deletes it.
    const removed = await sandbox.client.DELETE("/tokens/{tokenId}", {
      params: { path: { tokenId: admin.id } },
    });
    expect(removed.response.status).toBe(204);
  });

  it("hides one platform's tokens from another (404, never 403)", async () => {
    const token = await createToken(["VIEW"], "ours only");
    const other = await sandbox.otherPlatformClient();
    const got = await other.GET("/tokens/{tokenId}", { params: { path: { tokenId: token.id } } });
    expect(got.error).toMatchObject({ status: 404, code: "TOKEN_NOT_FOUND" });
    const deleted = await other.DELETE("/tokens/{tokenId}", {
      params: { path: { tokenId: token.id } },
    });
    expect(deleted.error).toMatchObject({ status: 404, code: "TOKEN_NOT_FOUND" });
    const ownToken = await other.GET("/tokens/{tokenId}", {
      params: { path: { tokenId: sandbox.credentials.tokenId } },
    });
    expect(ownToken.error).toMatchObject({ status: 404, code: "TOKEN_NOT_FOUND" });
    const list = await other.GET("/tokens", {});
    expect(list.data?.data.map((t) => t.id)).not.toContain(token.id);
    expect(list.data?.data.map((t) => t.id)).not.toContain(sandbox.credentials.tokenId);
    // A token the other platform makes is its own, and works there only.
    const theirs = await createToken(["VIEW"], "theirs", other);
    const mine = await sandbox.client.GET("/tokens/{tokenId}", {
      params: { path: { tokenId: theirs.id } },
    });
    expect(mine.error).toMatchObject({ status: 404, code: "TOKEN_NOT_FOUND" });
    const still = await sandbox.client.GET("/tokens/{tokenId}", {
      params: { path: { tokenId: token.id } },
    });
    expect(still.data?.name).toBe("ours only");
  });

  it("answers an unknown token id with 404 TOKEN_NOT_FOUND", async () => {
    for (const tokenId of [randomUUID(), "nope"]) {
      const got = await sandbox.client.GET("/tokens/{tokenId}", { params: { path: { tokenId } } });
      expect(got.error).toMatchObject({ status: 404, code: "TOKEN_NOT_FOUND" });
      const deleted = await sandbox.client.DELETE("/tokens/{tokenId}", {
        params: { path: { tokenId } },
      });
      expect(deleted.error).toMatchObject({ status: 404, code: "TOKEN_NOT_FOUND" });
    }
  });

  it("lists newest first, filtered by name and time, a page at a time", async () => {
    const name = `batch ${randomUUID()}`;
    const made: ApiToken[] = [];
    for (let i = 0; i < 3; i++) made.push(await createToken(["VIEW"], name));
    const first = await sandbox.client.GET("/tokens", { params: { query: { name, limit: 2 } } });
    expect(first.data).toMatchObject({ hasMore: true, totalCount: 3 });
    expect(first.data!.data.map((t) => t.id)).toEqual([made[2]!.id, made[1]!.id]);
    const second = await sandbox.client.GET("/tokens", {
      params: { query: { name, limit: 2, cursor: first.data!.nextCursor! } },
    });
    expect(second.data).toMatchObject({ hasMore: false, totalCount: 3 });
    expect(second.data!.data.map((t) => t.id)).toEqual([made[0]!.id]);
    expect(second.data).not.toHaveProperty("nextCursor");

    const since = await sandbox.client.GET("/tokens", {
      params: {
        query: { name, createdAfter: made[0]!.createdAt, updatedBefore: made[2]!.updatedAt },
      },
    });
    expect(since.data?.totalCount).toBe(3);
    const before = await sandbox.client.GET("/tokens", {
      params: { query: { createdBefore: "2000-01-01T00:00:00Z" } },
    });
    expect(before.data).toMatchObject({ data: [], hasMore: false, totalCount: 0 });
    const later = await sandbox.client.GET("/tokens", {
      params: { query: { updatedAfter: "2999-01-01T00:00:00Z" } },
    });
    expect(later.data?.totalCount).toBe(0);
  });

  it("refuses malformed requests with 400 INVALID_INPUT naming the field", async () => {
    const bodies: [unknown, string][] = [
      [{ permissions: ["VIEW"] }, "name"],
      [{ name: "no permissions" }, "permissions"],
      [{ name: "bad", permissions: ["ADMIN"] }, "permissions"],
      [{ name: "bad", permissions: "VIEW" }, "permissions"],
      [{ name: 42, permissions: ["VIEW"] }, "name"],
      [{ name: "extra", permissions: ["VIEW"], clientSecret: "mine" }, "clientSecret"],
    ];
    for (const [body, field] of bodies) {
      const res = await sandbox.rawFetch("/tokens", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(400);
      const error = (await res.json()) as {
        code: string;
        details?: { errors?: { field: string }[] };
      };
      expect(error.code).toBe("INVALID_INPUT");
      expect(JSON.stringify(error.details?.errors)).toContain(field);
    }
    for (const query of [
      "limit=0",
      "limit=101",
      "createdAfter=yesterday",
      "cursor=nonsense",
      "owner=me",
    ]) {
      const res = await sandbox.rawFetch(`/tokens?${query}`);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe("INVALID_INPUT");
    }
    const listed = await sandbox.client.GET("/tokens", { params: { query: { name: "bad" } } });
    expect(listed.data?.totalCount).toBe(0);
  });
});
