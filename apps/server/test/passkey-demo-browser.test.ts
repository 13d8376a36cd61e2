import { rmSync } from "node:fs";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { launchChromium } from "./support/chromium.js";

// The passkey demo page at /sandbox/passkey-demo, in Chromium with a virtual
// WebAuthn authenticator (DevTools protocol): the page makes a wallet, logs
// in by email code, registers a passkey of the browser, logs in with it and
// signs a wallet action with that session's key, all through the client's
// browser bundle. The sandbox runs with its default passkey settings, so this
// also checks that PASSKEY_ORIGIN defaults to an origin the sandbox serves.

let profile: string;
let context: BrowserContext;

beforeAll(async () => {
  ({ context, profile } = await launchChromium("passkey"));
});

afterAll(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe.each(databases)("the passkey demo page in Chromium on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  /** A fresh tab; `problems` collects page errors, console errors and failed requests. */
  async function open(url: string): Promise<{ page: Page; problems: string[] }> {
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    const problems: string[] = [];
    page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
    page.on("console", (msg) => {
      if (msg.type() === "error") problems.push(`console error: ${msg.text()}`);
    });
    page.on("requestfailed", (req) => problems.push(`failed: ${req.url()}`));
    page.on("response", (res) => {
      if (res.status() >= 400) problems.push(`${res.status()} from ${res.url()}`);
    });
    await page.goto(url);
    return { page, problems };
  }

  /** Clicks a step's button and waits until `field` shows its result (or the log an error). */
  async function runStep(page: Page, button: string, field: string): Promise<string> {
    await page.locator(`#${button}:enabled`).click();
    await page.locator(`#${field}:not(:text-is("—")), #log:has-text("✗")`).first().waitFor();
    const failures = (await page.locator("#log").innerText())
      .split("\n")
      .filter((l) => l.startsWith("✗"));
    expect(failures).toEqual([]);
    return page.locator(`#${field}`).innerText();
  }

  it("serves the demo on the passkey relying party's origin, and says so on any other", async () => {
    const demo = new URL(sandbox.server.passkeyDemoUrl);
    expect(demo.hostname).toBe("localhost");
    expect(demo.port).toBe(new URL(sandbox.server.origin).port);
    // The sandbox serves 127.0.0.1, which no passkey can belong to: the page
    // there points to the localhost one.
    const { page, problems } = await open(`${sandbox.server.origin}/sandbox/passkey-demo`);
    const notice = page.locator("#origin-notice");
    await notice.waitFor({ state: "visible" });
    expect(await notice.innerText()).toContain(sandbox.server.passkeyDemoUrl);
    await page.close();
    expect(problems).toEqual([]);
  });

  it("registers a passkey, logs in with it and signs a wallet action with the session key", async () => {
    const { page, problems } = await open(sandbox.server.passkeyDemoUrl);
    const cdp = await context.newCDPSession(page);
    await cdp.send("WebAuthn.enable");
    const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: {
        protocol: "ctap2",
        transport: "internal",
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    expect(await page.locator("#origin-notice").isHidden()).toBe(true);

    await page.locator("#token-id").fill(sandbox.credentials.tokenId);
    await page.locator("#token-secret").fill(sandbox.credentials.secret);
    const accountId = await runStep(page, "create-wallet", "wallet-account");
    expect(accountId).toMatch(/^InternalAccount:/);
    const methodId = await runStep(page, "register-passkey", "passkey-credential");
    expect(methodId).toMatch(/^AuthMethod:/);
    const sessionId = await runStep(page, "passkey-login", "passkey-session");
    expect(sessionId).toMatch(/^Session:/);
    expect(await runStep(page, "sign-action", "signed-action")).toBe("privateEnabled: true");

    // The authenticator holds the one passkey, used to register and to log in.
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.signCount).toBeGreaterThanOrEqual(2);
    await page.close();
    expect(problems).toEqual([]);

    // As the platform sees it: the passkey credential, its session, and the
    // wallet action done.
    const sessions = await sandbox.client.GET("/auth/sessions", {
      params: { query: { accountId } },
    });
    expect(sessions.data?.data).toContainEqual(
      expect.objectContaining({
        id: sessionId,
        type: "PASSKEY",
        nickname: "This browser",
        credentialId: credentials[0]!.credentialId
          .replace(/=+$/, "")
          .replace(/\+/g, "-")
          .replace(/\//g, "_"),
      }),
    );
    const wallet = await sandbox.client.GET("/customers/internal-accounts", {
      params: { query: { type: "EMBEDDED_WALLET" } },
    });
    expect(wallet.data?.data).toContainEqual(
      expect.objectContaining({ id: accountId, privateEnabled: true }),
    );
  }, 90_000);
});
