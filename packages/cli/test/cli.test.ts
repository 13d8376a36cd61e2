import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createClient, verifyWebhook, type Schemas } from "@payments-sandbox/client";
import { QUOTE_DESTINATION_TABLE } from "@payments-sandbox/sandbox-rules";
import { quoteOutcomes } from "../src/commands/trigger.js";
import {
  cli,
  cliBin,
  createTestPlatform,
  startCli,
  startForwardTarget,
  startLiveSandbox,
  waitFor,
  type LiveSandbox,
  type TestPlatform,
} from "./support.js";

type EventRecord = Schemas["WebhookEventRecord"];

// Every command against a live sandbox, each test on an isolated platform of
// its own (made and deleted with the CLI's `platforms` commands).

let sandbox: LiveSandbox;
beforeAll(async () => {
  sandbox = await startLiveSandbox();
});
afterAll(async () => {
  await sandbox?.stop();
});

let platform: TestPlatform;
beforeEach(async (context) => {
  platform = await createTestPlatform(sandbox, context.task.name.slice(0, 200));
});
afterEach(async () => {
  const deleted = await cli(["platforms", "delete", platform.created.id], sandbox.rootEnv);
  expect(deleted.code, deleted.stderr).toBe(0);
});

async function json<T>(args: string[]): Promise<T> {
  const result = await cli([...args, "--json"], platform.env);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
}

async function eventsAbout(objectId: string): Promise<EventRecord[]> {
  const page = await json<{ data: EventRecord[] }>(["events", "list", "--object-id", objectId]);
  return page.data;
}

describe("platforms", () => {
  it("creates a platform whose credentials work, and deletes it so they no longer do", async () => {
    const made = await cli(["platforms", "create", "--name", "scratch"], sandbox.rootEnv);
    expect(made.code, made.stderr).toBe(0);
    const id = /Platform (Platform:\S+) \(scratch\)/.exec(made.stdout)?.[1];
    const tokenId = /^export SANDBOX_TOKEN_ID=(\S+)$/m.exec(made.stdout)?.[1];
    const secret = /^export SANDBOX_TOKEN_SECRET=(\S+)$/m.exec(made.stdout)?.[1];
    expect(id && tokenId && secret).toBeTruthy();
    const env = {
      SANDBOX_BASE_URL: sandbox.baseUrl,
      SANDBOX_TOKEN_ID: tokenId!,
      SANDBOX_TOKEN_SECRET: secret!,
    };
    expect((await cli(["clock", "show"], env)).code).toBe(0);

    // A platform's own credentials cannot make or remove platforms.
    const nested = await cli(["platforms", "create"], env);
    expect(nested.code).toBe(1);
    expect(nested.stderr).toContain("403 FORBIDDEN");

    const deleted = await cli(["platforms", "delete", id!], sandbox.rootEnv);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toContain(`Deleted ${id}`);
    const refused = await cli(["clock", "show"], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("401");
    const again = await cli(["platforms", "delete", id!], sandbox.rootEnv);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("404 REFERENCE_NOT_FOUND");
  });

  it("gives each test a platform of its own", async () => {
    const config = await platform.client.GET("/config");
    expect(config.data?.id).toBe(platform.created.id);
    const root = createClient({
      baseUrl: sandbox.baseUrl,
      tokenId: sandbox.rootEnv.SANDBOX_TOKEN_ID!,
      secret: sandbox.rootEnv.SANDBOX_TOKEN_SECRET!,
    });
    expect((await root.GET("/config")).data?.id).not.toBe(platform.created.id);
  });
});

describe("trigger", () => {
  it("card-purchase authorizes and clears a purchase", async () => {
    // With --json the progress lines go to stderr and the result to stdout.
    const result = await cli(
      ["trigger", "card-purchase", "--amount", "1234", "--json"],
      platform.env,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Authorized 1234 at .*: AUTHORIZED/);
    expect(result.stderr).toMatch(/Cleared 1234: SETTLED/);
    const done = JSON.parse(result.stdout) as { cardTransactionId: string; status: string };
    expect(done.status).toBe("SETTLED");
    const types = (await eventsAbout(done.cardTransactionId)).map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining(["CARD_TRANSACTION.AUTHORIZED", "CARD_TRANSACTION.SETTLED"]),
    );
  });

  it("incoming-payment credits a customer", async () => {
    const done = await json<{ transactionId: string; accountId: string; status: string }>([
      "trigger",
      "incoming-payment",
      "--amount",
      "2500",
    ]);
    expect(done.status).toBe("COMPLETED");
    expect((await eventsAbout(done.transactionId)).map((e) => e.type)).toContain(
      "INCOMING_PAYMENT.COMPLETED",
    );
    const balances = await eventsAbout(done.accountId);
    const last = balances[0]!.payload.data as unknown as Schemas["InternalAccount"];
    expect(last.balance.amount).toBe(2500);
  });

  it("kyc takes a customer from PENDING to APPROVED", async () => {
    const done = await json<{ customerId: string; kycStatus: string }>(["trigger", "kyc"]);
    expect(done.kycStatus).toBe("APPROVED");
    const types = (await eventsAbout(done.customerId)).map((e) => e.type).reverse();
    expect(types).toEqual(["CUSTOMER.KYC_PENDING", "CUSTOMER.KYC_APPROVED"]);
  });

  it("quote reaches each outcome of the quote table", async () => {
    for (const { name } of quoteOutcomes()) {
      const row =
        QUOTE_DESTINATION_TABLE.rows.find((r) => r.match === name) ?? QUOTE_DESTINATION_TABLE.other;
      const final = row.outcome.steps.at(-1)!.status;
      const done = await json<{ status: string; outcome: string }>([
        "trigger",
        "quote",
        "--outcome",
        name,
      ]);
      expect({ name, status: done.status }).toEqual({ name, status: final });
    }
    // Without advancing the clock, a slow payment is still under way.
    const slow = QUOTE_DESTINATION_TABLE.rows.find((r) => r.outcome.steps[0]!.afterSeconds > 0)!;
    const pending = await json<{ status: string }>([
      "trigger",
      "quote",
      "--outcome",
      slow.match,
      "--no-advance",
    ]);
    expect(pending.status).toBe("PROCESSING");
  });

  it("refuses an unknown flow or outcome with a usage error", async () => {
    const flow = await cli(["trigger", "teleport"], platform.env);
    expect(flow.code).toBe(2);
    expect(flow.stderr).toContain('unknown flow "teleport": use one of card-purchase, ');
    expect(flow.stderr).toContain("trigger --list");
    const outcome = await cli(["trigger", "quote", "--outcome", "999"], platform.env);
    expect(outcome.code).toBe(2);
  });
});

describe("clock", () => {
  it("advances the platform's clock by a duration", async () => {
    const moved = await cli(["clock", "advance", "1h30m"], platform.env);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.stdout).toContain("(5400s ahead)");
    const clock = await json<{ offsetSeconds: number }>(["clock", "show"]);
    expect(clock.offsetSeconds).toBe(5400);
    const more = await json<{ offsetSeconds: number }>(["clock", "advance", "90"]);
    expect(more.offsetSeconds).toBe(5490);

    const bad = await cli(["clock", "advance", "soon"], platform.env);
    expect(bad.code).toBe(2);
    // Extra words and unknown units are errors, not a quiet 6 seconds.
    const words = await cli(["clock", "advance", "6", "minutes"], platform.env);
    expect(words.code).toBe(2);
    expect(words.stderr).toContain('unexpected argument "minutes"');
    const unit = await cli(["clock", "advance", "6min"], platform.env);
    expect(unit.code).toBe(2);
    expect(unit.stderr).toContain('"6min" is not a duration');
    expect((await json<{ offsetSeconds: number }>(["clock", "show"])).offsetSeconds).toBe(5490);
  });

  it("names the permission a token lacks: a VIEW token shows the clock, not moves it", async () => {
    const made = await platform.client.POST("/tokens", {
      body: { name: "viewer", permissions: ["VIEW"] },
    });
    const env = {
      ...platform.env,
      SANDBOX_TOKEN_ID: made.data!.clientId,
      SANDBOX_TOKEN_SECRET: made.data!.clientSecret!,
    };
    expect((await cli(["clock", "show"], env)).code).toBe(0);
    const refused = await cli(["clock", "advance", "1h"], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("401 UNAUTHORIZED");
    expect(refused.stderr).toContain("(use a token with the MANAGE permission)");
    expect((await json<{ offsetSeconds: number }>(["clock", "show"])).offsetSeconds).toBe(0);
  });
});

describe("listen and events", () => {
  it("receives, verifies and forwards every webhook, replays one, and shows the delivery log", async () => {
    const target = await startForwardTarget();
    const listener = startCli(["listen", "--forward-to", target.url, "--json"], platform.env);
    try {
      await waitFor("listen to be ready", () => listener.stdout().includes('"listening"'));
      const ready = JSON.parse(listener.stdout().split("\n")[0]!) as { listening: string };
      expect((await platform.client.GET("/config")).data?.webhookEndpoint).toBe(ready.listening);

      const done = await json<{ customerId: string }>(["trigger", "kyc"]);
      await waitFor("both KYC events forwarded", () => target.received.length >= 2);
      // Forwarded unchanged: the platform's key verifies what the target got.
      for (const webhook of target.received) {
        expect(
          verifyWebhook(webhook.body, webhook.signature, platform.created.webhookPublicKey),
        ).toBe(true);
        // Under both names, as the sandbox sends them.
        expect(webhook.legacySignature).toBe(webhook.signature);
      }
      const forwarded = target.received.map(
        (w) => JSON.parse(w.body) as { id: string; type: string },
      );
      expect(forwarded.map((e) => e.type)).toEqual([
        "CUSTOMER.KYC_PENDING",
        "CUSTOMER.KYC_APPROVED",
      ]);

      // A delivery with a bad signature is refused and not forwarded, under
      // either name; X-Grid-Signature is read first.
      const forgeries: Record<string, string>[] = [
        { "X-Grid-Signature": "forged" },
        { "X-Service-Signature": "forged" },
        { "X-Grid-Signature": "forged", "X-Service-Signature": target.received[0]!.signature! },
      ];
      for (const headers of forgeries) {
        const forged = await fetch(ready.listening, {
          method: "POST",
          headers: { "Content-Type": "application/json", ...headers },
          body: target.received[0]!.body,
        });
        expect(forged.status).toBe(400);
      }
      // A receiver that sends only the old name is still verified (and forwarded).
      const legacyOnly = await fetch(ready.listening, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "X-Service-Signature": target.received[0]!.signature!,
        },
        body: target.received[0]!.body,
      });
      expect(legacyOnly.status).toBe(200);
      await waitFor("the old-name delivery forwarded", () => target.received.length === 3);

      // events list shows both, and replay sends the first again.
      const listed = await eventsAbout(done.customerId);
      expect(listed.map((e) => e.id).sort()).toEqual(forwarded.map((e) => e.id).sort());
      const first = forwarded[0]!.id;
      const replayed = await cli(["events", "replay", first], platform.env);
      expect(replayed.code, replayed.stderr).toBe(0);
      expect(replayed.stdout).toContain(`Queued ${first}`);
      await waitFor("the replay forwarded", () => target.received.length === 4);
      expect((JSON.parse(target.received[3]!.body) as { id: string }).id).toBe(first);
      await waitFor("the replay's attempt recorded", async () => {
        const event = (await eventsAbout(done.customerId)).find((e) => e.id === first);
        return event?.attempts.length === 2;
      });
      const human = await cli(["events", "list", "--object-id", done.customerId], platform.env);
      expect(human.stdout).toContain(`${first}  CUSTOMER.KYC_PENDING`);
      expect(human.stdout.match(/attempt .* → 200/g)).toHaveLength(3);

      listener.child.kill("SIGINT");
      const exited = await listener.exited;
      expect(exited.code, exited.stderr).toBe(0);
      const lines = exited.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      const deliveries = lines.flatMap((l) =>
        l.delivery
          ? [l.delivery as { eventId: string; verified: boolean; forwardStatus?: number }]
          : [],
      );
      expect(deliveries.map((d) => [d.eventId, d.verified, d.forwardStatus ?? null])).toEqual([
        [forwarded[0]!.id, true, 200],
        [forwarded[1]!.id, true, 200],
        [forwarded[0]!.id, false, null],
        [forwarded[0]!.id, false, null],
        [forwarded[0]!.id, false, null],
        [forwarded[0]!.id, true, 200],
        [first, true, 200],
      ]);
      const log = lines.at(-1)!.deliveryLog as EventRecord[];
      expect(log.find((e) => e.id === first)?.attempts).toHaveLength(2);
      // The endpoint is put back as it was: none.
      expect((await platform.client.GET("/config")).data).not.toHaveProperty("webhookEndpoint");
    } finally {
      if (listener.child.exitCode === null) listener.child.kill("SIGKILL");
      await target.close();
    }
  });

  it("forwards to a URL typed without http://, and prints the network error of a failed forward", async () => {
    const target = await startForwardTarget();
    const withoutScheme = target.url.replace(/^http:\/\//, "");
    // A port nothing listens on: the target's, once it is closed.
    const closed = await startForwardTarget();
    await closed.close();
    const refusedUrl = closed.url.replace(/^http:\/\//, "");
    const good = startCli(["listen", "--forward-to", withoutScheme], platform.env);
    try {
      await waitFor("listen to be ready", () => good.stdout().includes("Ready."));
      expect(good.stdout()).toContain(`forwarded to ${target.url}`);
      await json(["trigger", "kyc"]);
      await waitFor("both KYC events forwarded", () => target.received.length >= 2);
    } finally {
      good.child.kill("SIGINT");
      await good.exited;
      await target.close();
    }
    const bad = startCli(["listen", "--forward-to", refusedUrl], platform.env);
    try {
      await waitFor("listen to be ready", () => bad.stdout().includes("Ready."));
      await json(["trigger", "kyc"]);
      await waitFor("a failed forward printed", () => bad.stdout().includes("failed:"));
      expect(bad.stdout()).toMatch(/failed: connect ECONNREFUSED 127\.0\.0\.1:\d+/);
      expect(bad.stdout()).not.toContain("fetch failed");
    } finally {
      bad.child.kill("SIGINT");
      await bad.exited;
    }
    const nonsense = await cli(["listen", "--forward-to", "ftp://example.com/x"], platform.env);
    expect(nonsense.code).toBe(2);
    expect(nonsense.stderr).toContain("--forward-to must be an http:// or https:// URL");
  });

  it("replay needs an endpoint, and lists filter by type", async () => {
    const done = await json<{ customerId: string }>(["trigger", "kyc"]);
    const pending = await json<{ data: EventRecord[] }>([
      "events",
      "list",
      "--type",
      "CUSTOMER.KYC_PENDING",
    ]);
    expect(pending.data.map((e) => e.objectId)).toEqual([done.customerId]);
    const replay = await cli(["events", "replay", pending.data[0]!.id], platform.env);
    expect(replay.code).toBe(1);
    expect(replay.stderr).toContain("WEBHOOK_ENDPOINT_NOT_SET");
  });
});

describe("logs tail", () => {
  it("shows each API request as it happens, filtered, with --json one line per request", async () => {
    const all = startCli(["logs", "tail"], platform.env);
    const refused = startCli(
      ["logs", "tail", "--status", "4xx", "--method", "post", "--path", "/customers", "--json"],
      platform.env,
    );
    const byCode = startCli(
      ["logs", "tail", "--error-code", "INVALID_INPUT", "--json"],
      platform.env,
    );
    try {
      for (const tail of [all, refused, byCode]) {
        await waitFor(
          "the tail to start",
          () => tail.stdout().includes("Tailing") || tail.stderr().includes("Tailing"),
        );
      }
      const api = platform.client;
      const listed = await api.GET("/customers");
      expect(listed.response.status).toBe(200);
      const secret = "4111111111111111";
      const bad = await api.POST("/customers", {
        // A value the contract refuses, carrying something that must never be logged.
        body: { customerType: "NOBODY", fullName: secret } as never,
      });
      expect(bad.response.status).toBe(400);
      const requestId = bad.response.headers.get("X-Trace-Id")!;
      await waitFor("both requests tailed", () => all.stdout().includes(requestId));
      await waitFor("the refusal tailed as JSON", () => refused.stdout().includes(requestId));
      await waitFor("the refusal tailed by code", () => byCode.stdout().includes(requestId));

      const lines = all.stdout().trim().split("\n").slice(-2);
      expect(lines[0]).toMatch(/GET +\/2025-10-13\/customers +200 +[\d.]+ ms +\S+/);
      expect(lines[1]).toContain(`POST   /2025-10-13/customers  400 INVALID_INPUT`);
      expect(lines[1]).toContain(requestId);

      const json = refused
        .stdout()
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Schemas["SandboxRequestLogEntry"]);
      expect(json).toHaveLength(1);
      expect(json[0]).toMatchObject({
        method: "POST",
        path: "/2025-10-13/customers",
        status: 400,
        requestId,
        error: { code: "INVALID_INPUT" },
      });
      expect(json[0]!.latencyMs).toBeGreaterThanOrEqual(0);
      for (const tail of [all, refused, byCode]) {
        expect(tail.stdout()).not.toContain(secret);
        expect(tail.stdout()).not.toContain(platform.env.SANDBOX_TOKEN_SECRET!);
      }
    } finally {
      for (const tail of [all, refused, byCode]) tail.child.kill("SIGINT");
      for (const tail of [all, refused, byCode]) expect((await tail.exited).code).toBe(0);
    }
    const badStatus = await cli(["logs", "tail", "--status", "4x"], platform.env);
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toContain('--status "4x" is not a status');
  });

  it("shows only the platform's own requests", async () => {
    const other = await createTestPlatform(sandbox, "other platform");
    try {
      await other.client.GET("/customers");
      const page = await platform.client.GET("/sandbox/logs/requests");
      expect(page.data!.data.filter((e) => e.path === "/2025-10-13/customers")).toEqual([]);
      const theirs = await other.client.GET("/sandbox/logs/requests");
      expect(theirs.data!.data.map((e) => e.path)).toEqual(["/2025-10-13/customers"]);
    } finally {
      await cli(["platforms", "delete", other.created.id], sandbox.rootEnv);
    }
  });
});

describe("login", () => {
  it("logs a wallet in by its EMAIL_OTP credential, keeping the key only in the key file", async () => {
    const api = platform.client;
    const email = "grace@example.com";
    const customer = await api.POST("/customers", {
      body: { customerType: "INDIVIDUAL", fullName: "Grace Hopper", email, currencies: ["USDB"] },
    });
    const wallets = await api.GET("/customers/internal-accounts", {
      params: { query: { customerId: customer.data!.id!, type: "EMBEDDED_WALLET" } },
    });
    // The wallet opens with an EMAIL_OTP credential on the customer's email.
    const credentials = await api.GET("/auth/credentials", {
      params: { query: { accountId: wallets.data!.data[0]!.id } },
    });
    const credentialId = credentials.data!.data.find((m) => m.type === "EMAIL_OTP")!.id;
    const dir = mkdtempSync(join(tmpdir(), "cli-login-"));
    try {
      const keyFile = join(dir, "session-key.json");
      const done = await json<{ session: Schemas["AuthSession"]; keyFile: string }>([
        "login",
        "otp",
        credentialId,
        "--key-file",
        keyFile,
      ]);
      expect(done.session).toMatchObject({ type: "EMAIL_OTP" });
      expect(JSON.stringify(done)).not.toMatch(/privateKeyHex/);
      const key = JSON.parse(readFileSync(keyFile, "utf8")) as Record<string, string>;
      expect(key.sessionId).toBe(done.session.id);
      expect(key.privateKeyHex).toMatch(/^[0-9a-f]{64}$/);
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);

      // A wrong code is the API's refusal, exit code 1.
      const wrong = await cli(["login", "otp", credentialId, "--code", "123456"], platform.env);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toContain("login failed: 401");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("usage", () => {
  it("says how to build the CLI when it is run before being built", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cli-unbuilt-"));
    try {
      // The package as a fresh clone has it: the bin, no dist.
      mkdirSync(join(dir, "bin"));
      copyFileSync(cliBin, join(dir, "bin", "payments-sandbox.js"));
      writeFileSync(join(dir, "package.json"), '{"type":"module"}');
      const run = spawnSync(process.execPath, [join(dir, "bin", "payments-sandbox.js"), "--help"], {
        encoding: "utf8",
      });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain("payments-sandbox is not built yet");
      expect(run.stderr).toContain("npm run sandbox");
      expect(run.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|\n\s+at /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("prints help, and refuses missing credentials and unknown commands with exit code 2", async () => {
    const help = await cli(["--help"], {});
    expect(help.code).toBe(0);
    for (const word of ["listen", "trigger", "events list", "clock advance", "platforms create"]) {
      expect(help.stdout).toContain(word);
    }
    expect(help.stdout).toContain("SANDBOX_TOKEN_SECRET");
    const anonymous = await cli(["clock", "show"], { SANDBOX_BASE_URL: sandbox.baseUrl });
    expect(anonymous.code).toBe(2);
    expect(anonymous.stderr).toContain("SANDBOX_TOKEN_ID");
    expect((await cli(["teleport"], platform.env)).code).toBe(2);
    expect((await cli(["events", "list", "--forward-to", "x"], platform.env)).code).toBe(2);
    const flags = await cli(
      [
        "clock",
        "show",
        "--base-url",
        sandbox.baseUrl,
        "--token-id",
        platform.env.SANDBOX_TOKEN_ID!,
        "--token-secret",
        platform.env.SANDBOX_TOKEN_SECRET!,
      ],
      {},
    );
    expect(flags.code, flags.stderr).toBe(0);
  });
});
