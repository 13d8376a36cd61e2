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
import { describe, expect, it } from "vitest";
import { createClient, type Schemas } from "@payments-sandbox/client";
import { QUOTE_DESTINATION_TABLE } from "@payments-sandbox/sandbox-rules";
import { quoteOutcomes } from "../src/commands/trigger.js";
import { cli, cliBin } from "./support.js";
import { eventsAbout, json, onePlatformPerTest, platform, sandbox } from "./platform-per-test.js";

// The CLI's commands against a live sandbox: platforms, trigger, clock, login
// and usage. listen, events and logs tail are in cli-listen-and-logs.test.ts.

onePlatformPerTest();

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
