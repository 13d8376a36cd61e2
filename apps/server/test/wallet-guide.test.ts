import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { guideScript, repoRoot, runGuideScript, typeProblems } from "./support/guides.js";

// docs/wallet-guide.md's script, taken out of the page as printed,
// type-checked against the typed client and run against a live sandbox:
// the wallet flows of the client, as a partner calls them.

const script = guideScript("wallet-guide.md", "wallet-guide:script");
// Inside the repository, so `@payments-sandbox/client` resolves as it would for a user.
const workDir = join(repoRoot, "node_modules", ".cache", "wallet-guide");
const scriptFile = join(workDir, `wallet-guide-${process.pid}.mts`);

beforeAll(() => {
  mkdirSync(workDir, { recursive: true });
  writeFileSync(scriptFile, script);
});
afterAll(() => {
  rmSync(scriptFile, { force: true });
});

describe("the wallet guide", () => {
  it("type-checks against the client", () => {
    const problems = typeProblems([scriptFile]);
    expect(problems).toEqual([]);
  });
});

describe.each(databases)("the wallet guide on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("runs as printed: OTP, SMS and OAuth logins, signed actions, a payment, refresh, logout", async () => {
    const stdout = await runGuideScript(sandbox, scriptFile);
    const lines = stdout.trim().split("\n");
    expect(lines.slice(0, -1)).toEqual([
      expect.stringMatching(/^logged in by EMAIL_OTP, session Session:\S+$/),
      "privacy on, signed by the session key",
      "paid 5000 USDB, signed by the session key",
      "logged in by SMS_OTP too",
      "logged in by OAUTH, session key opened",
      "refreshed: the new key signs, the old one is refused",
    ]);
    const { customerId, accountId, sessionId } = JSON.parse(lines.at(-1)!) as {
      customerId: string;
      accountId: string;
      sessionId: string;
    };

    // As the API sees it afterwards: privacy off again, the payment taken
    // from the wallet, the session gone, the SMS and OAuth sessions still there.
    const accounts = await sandbox.client.GET("/customers/internal-accounts", {
      params: { query: { customerId, type: "EMBEDDED_WALLET" } },
    });
    expect(accounts.data?.data).toEqual([
      expect.objectContaining({
        id: accountId,
        privateEnabled: false,
        balance: expect.objectContaining({ amount: 5_000 }),
      }),
    ]);
    const sessions = await sandbox.client.GET("/auth/sessions", {
      params: { query: { accountId } },
    });
    const listed = sessions.data!.data;
    expect(listed.map((s) => s.id)).not.toContain(sessionId);
    expect(listed.map((s) => s.type).sort()).toEqual(["OAUTH", "SMS_OTP"]);
  }, 90_000);
});
