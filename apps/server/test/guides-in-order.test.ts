import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSandbox, type TestSandbox } from "./harness.js";
import { guideScript, repoRoot, runGuideScript } from "./support/guides.js";

const run = promisify(execFile);

// A partner follows the guides one after another against the one sandbox
// `npm run sandbox` started, not each against a fresh one: a guide must not
// leave the platform in a state that breaks another (the sandbox guide moves
// the platform's clock ahead, for one). This runs them in the README's order
// on one sandbox and one platform, then the scripts again after the last.

/** The guide pages the README links under "Guides", in its order. */
function readmeGuideOrder(): string[] {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
  const section = /^## Guides\n([\s\S]*?)^## /m.exec(readme)?.[1] ?? "";
  return [...section.matchAll(/^- \[[^\]]+\]\(docs\/([\w-]+-guide\.md)\)/gm)].map((m) => m[1]!);
}

const workDir = join(repoRoot, "node_modules", ".cache", "guides-in-order");
const scripts: Record<string, string[]> = {};

/** The page's runnable parts: its TypeScript scripts, or its shell blocks. */
function stepsOf(page: string): { kind: "ts" | "sh"; file: string }[] {
  return (scripts[page] ?? []).map((file) => ({ kind: file.endsWith(".sh") ? "sh" : "ts", file }));
}

beforeAll(() => {
  mkdirSync(workDir, { recursive: true });
  const markers: Record<string, string> = {
    "cards-guide.md": "cards-guide:script",
    "wallet-guide.md": "wallet-guide:script",
  };
  for (const page of readmeGuideOrder()) {
    const file = join(workDir, `${page.replace(".md", "")}-${process.pid}`);
    const marker = markers[page];
    if (marker) {
      writeFileSync(`${file}.mts`, guideScript(page, marker));
      scripts[page] = [`${file}.mts`];
    } else {
      const text = readFileSync(join(repoRoot, "docs", page), "utf8");
      const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
      writeFileSync(`${file}.sh`, blocks.join("\n"));
      scripts[page] = [`${file}.sh`];
    }
  }
});
afterAll(() => {
  for (const files of Object.values(scripts))
    for (const file of files) rmSync(file, { force: true });
});

describe("the guides, one after another on one sandbox", () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox("sqlite");
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  async function runPage(page: string): Promise<void> {
    for (const step of stepsOf(page)) {
      if (step.kind === "ts") {
        await runGuideScript(sandbox, step.file);
        continue;
      }
      const script = readFileSync(step.file, "utf8").replaceAll(
        "http://localhost:3000/2025-10-13",
        sandbox.server.baseUrl,
      );
      await run("sh", ["-ec", script], {
        env: {
          PATH: process.env.PATH ?? "",
          SANDBOX_TOKEN_ID: sandbox.credentials.tokenId,
          SANDBOX_TOKEN_SECRET: sandbox.credentials.secret,
        },
        timeout: 150_000,
      });
    }
  }

  it("runs every guide in the README's order, then the scripts again", async () => {
    const order = readmeGuideOrder();
    expect(order).toEqual(["cards-guide.md", "wallet-guide.md", "sandbox-guide.md"]);
    // Each run throws (failing the test) when a script exits non-zero.
    for (const page of order) await runPage(page);
    // After the sandbox guide moved the clock: the scripts still run.
    for (const page of order.filter((p) => stepsOf(p).every((s) => s.kind === "ts"))) {
      await runPage(page);
    }
    // Five guide runs, each a process of its own.
  }, 600_000);
});
