import { spawn, execFile, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { repoRoot } from "../src/paths.js";

const run = promisify(execFile);
const mainJs = join(repoRoot, "apps/server/dist/main.js");

interface Started {
  child: ChildProcess;
  output: () => string;
  baseUrl: string;
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGTERM");
});

async function start(env: Record<string, string>): Promise<Started> {
  const child = spawn(process.execPath, [mainJs], {
    env: { PATH: process.env.PATH ?? "", PORT: "0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 20_000);
    const poll = setInterval(() => {
      const m = /Base URL:\s+(\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        clearInterval(poll);
        resolve(m[1]!);
      }
    }, 50);
    child.once("exit", (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
  });
  return { child, output: () => output, baseUrl };
}

async function stop(s: Started): Promise<number | null> {
  return new Promise((resolve) => {
    s.child.once("exit", (code) => resolve(code));
    s.child.kill("SIGTERM");
  });
}

describe("starting the sandbox from the command line", () => {
  it("creates a platform and token on first start, prints them once, and they work", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandbox-start-"));
    try {
      const env = { DATABASE_URL: `file:${join(dir, "db.sqlite")}` };
      const first = await start(env);
      expect(first.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/2025-10-13$/);
      const tokenId = /Token id:\s+(\S+)/.exec(first.output())?.[1];
      const secret = /Secret:\s+(\S+)/.exec(first.output())?.[1];
      expect(tokenId).toBeTruthy();
      expect(secret).toBeTruthy();

      // The printed curl line works as printed.
      const curlLine = /^\s*(curl .*)$/m.exec(first.output())?.[1];
      expect(curlLine).toBeTruthy();
      const { stdout } = await run("sh", ["-c", `${curlLine} -s -w '\\n%{http_code}'`]);
      expect(stdout.trim().split("\n").at(-1)).toBe("200");
      expect(JSON.parse(stdout.trim().split("\n")[0]!)).toMatchObject({ data: [] });
      // The secret appears in the banner only, never in a log line.
      const logLines = first
        .output()
        .split("\n")
        .filter((l) => l.startsWith("{"));
      expect(logLines.length).toBeGreaterThan(0);
      expect(logLines.join("\n")).not.toContain(secret!);
      expect(await stop(first)).toBe(0);

      const second = await start(env);
      expect(second.output()).not.toContain(secret!);
      const res = await fetch(`${second.baseUrl}/customers`, {
        headers: {
          Authorization: `Basic ${Buffer.from(`${tokenId}:${secret}`).toString("base64")}`,
        },
      });
      expect(res.status).toBe(200);
      await stop(second);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("uses credentials from the environment as they are and never prints or logs them", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandbox-start-"));
    try {
      const secret = "env-secret-4f1d2c";
      const s = await start({
        DATABASE_URL: `file:${join(dir, "db.sqlite")}`,
        SANDBOX_TOKEN_ID: "ci-token",
        SANDBOX_TOKEN_SECRET: secret,
      });
      const auth = `Basic ${Buffer.from(`ci-token:${secret}`).toString("base64")}`;
      expect(
        (await fetch(`${s.baseUrl}/customers`, { headers: { Authorization: auth } })).status,
      ).toBe(200);
      const bad = await fetch(`${s.baseUrl}/customers`, {
        headers: { Authorization: `Basic ${Buffer.from("ci-token:other").toString("base64")}` },
      });
      expect(bad.status).toBe(401);
      await stop(s);
      expect(s.output()).not.toContain(secret);
      expect(s.output()).not.toMatch(/Secret:/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("runs the README's curl example as printed", async () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
    const block = /<!-- curl-example -->\s*```sh\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block, "README has a curl example block").toBeTruthy();
    const dir = mkdtempSync(join(tmpdir(), "sandbox-start-"));
    try {
      const s = await start({
        DATABASE_URL: `file:${join(dir, "db.sqlite")}`,
        SANDBOX_TOKEN_ID: "demo-token",
        SANDBOX_TOKEN_SECRET: "demo-secret",
      });
      const port = new URL(s.baseUrl).port;
      // The README targets the default port; point it at this test's port.
      const script = block!.replaceAll("localhost:3000", `127.0.0.1:${port}`);
      const { stdout } = await run("sh", ["-ec", script], {
        env: {
          PATH: process.env.PATH ?? "",
          SANDBOX_TOKEN_ID: "demo-token",
          SANDBOX_TOKEN_SECRET: "demo-secret",
        },
      });
      const customer = JSON.parse(stdout);
      expect(customer.id).toMatch(/^Customer:/);
      await stop(s);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
