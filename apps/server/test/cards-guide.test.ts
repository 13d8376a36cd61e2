import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { guideScript, repoRoot, runGuideScript, typeProblems } from "./support/guides.js";
import { eventsFor } from "./card-fixtures.js";

// docs/cards-guide.md is a script with prose around it. This test takes the
// script out of the page exactly as printed, type-checks it against the typed
// client, and runs it against a live sandbox: the guide cannot drift from the
// API or from what the sandbox does.

/** The guide's first script, and the rest of the card network. */
const script = guideScript("cards-guide.md", "cards-guide:script");
const networkScript = guideScript("cards-guide.md", "cards-guide:network-script");
// Inside the repository, so `@payments-sandbox/client` resolves as it would for a user.
const workDir = join(repoRoot, "node_modules", ".cache", "cards-guide");
const scriptFile = join(workDir, `cards-guide-${process.pid}.mts`);
const networkFile = join(workDir, `cards-guide-network-${process.pid}.mts`);

beforeAll(() => {
  expect(script, "docs/cards-guide.md has the marked script block").toBeTruthy();
  expect(networkScript, "docs/cards-guide.md has the marked network script block").toBeTruthy();
  mkdirSync(workDir, { recursive: true });
  writeFileSync(scriptFile, script!);
  writeFileSync(networkFile, networkScript!);
});
afterAll(() => {
  rmSync(scriptFile, { force: true });
  rmSync(networkFile, { force: true });
});

describe("the cards guide", () => {
  it("type-checks against the generated client", () => {
    const problems = typeProblems([scriptFile, networkFile]);
    expect(problems).toEqual([]);
  });
});

describe.each(databases)("the cards guide on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("runs as printed: issue, activate, authorize, clear, refund", async () => {
    const stdout = await runGuideScript(sandbox, scriptFile);
    const lines = stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^card Card:\S+ is ACTIVE, ending in 4042$/);
    expect(stdout).toContain("authorized 2500; balance 7500");
    expect(stdout).toMatch(/^declined: INSUFFICIENT_FUNDS \(.+002.+\)$/m);
    expect(stdout).toContain("settled 2750 in 2 pulls");
    expect(stdout).toContain("refunded 2750; balance back to 10000");
    const { cardTransactionId } = JSON.parse(lines.at(-1)!) as { cardTransactionId: string };

    // What the script did is really there, as a user would check it.
    const { data } = await sandbox.client.GET("/transactions/{transactionId}", {
      params: { path: { transactionId: cardTransactionId } },
    });
    expect(data).toMatchObject({
      type: "CARD",
      status: "REFUNDED",
      settledAmount: { amount: 2750 },
      refundedAmount: { amount: 2750 },
    });
    // The declined purchase left no card transaction: the cardholder has the one.
    const listed = await sandbox.client.GET("/transactions", {
      params: { query: { customerId: data!.customerId } },
    });
    expect(listed.data?.data.filter((t) => t.type === "CARD").map((t) => t.id)).toEqual([
      cardTransactionId,
    ]);
    const events = await eventsFor(sandbox, cardTransactionId);
    expect(events.map((e) => e.type)).toEqual([
      "CARD_TRANSACTION.AUTHORIZED",
      "CARD_TRANSACTION.SETTLED",
      "CARD_TRANSACTION.REFUNDED",
    ]);
    // A fresh sandbox compiles each operation's checks on first use, and the
    // guide uses many operations once each (a tsx start-up too).
  }, 90_000);

  it("runs the rest of the card network as printed", async () => {
    const stdout = await runGuideScript(sandbox, networkFile);
    const lines = stdout.trim().split("\n");
    expect(lines.slice(0, -1)).toEqual([
      "balance inquiry AUTHORIZED; balance 10000",
      "withdrawal SETTLED; balance 2000",
      "push credit SETTLED; balance 6000",
      "credit SETTLED; balance 7500",
      "hotel settled at 3000; balance 4500",
      "return reversed: SETTLED; balance 4500",
    ]);
    const { cardTransactionId } = JSON.parse(lines.at(-1)!) as { cardTransactionId: string };
    const { data } = await sandbox.client.GET("/transactions/{transactionId}", {
      params: { path: { transactionId: cardTransactionId } },
    });
    expect(data).toMatchObject({
      type: "CARD",
      status: "SETTLED",
      authorizedAmount: { amount: 3000 },
      settledAmount: { amount: 3000 },
      refundedAmount: { amount: 0 },
      pullSummary: { count: 3, totalAmount: 6000, pendingCount: 0 },
    });
    const events = await eventsFor(sandbox, cardTransactionId);
    expect(events.map((e) => e.type)).toEqual([
      "CARD_TRANSACTION.AUTHORIZED",
      "CARD_TRANSACTION.AUTHORIZED",
      "CARD_TRANSACTION.SETTLED",
      "CARD_TRANSACTION.REFUNDED",
      "CARD_TRANSACTION.SETTLED",
    ]);
    expect(events.at(-1)!.data).toEqual(data);
  }, 90_000);
});
