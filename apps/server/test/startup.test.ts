import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseDatabaseUrl, pgPoolConfig } from "../src/db/client.js";
import { repoRoot } from "../src/paths.js";
import { databases, freshDatabase, type TestDatabase } from "./harness.js";
import { killAll, runUntilExit, startProcess as start } from "./support/sandbox-process.js";

const run = promisify(execFile);
afterEach(killAll);

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

      // At the default level nothing but the banner comes before it: no log line.
      expect(first.output().trimStart()).toMatch(/^Payments platform sandbox is running/);
      // The printed export lines and curl line work as printed, in one shell.
      const exportLines = first.output().match(/^\s*export SANDBOX_\S+=.*$/gm) ?? [];
      expect(exportLines.join("\n")).toContain(
        `SANDBOX_TOKEN_ID=${tokenId} SANDBOX_TOKEN_SECRET=${secret}`,
      );
      const curlLine = /^\s*(curl .*)$/m.exec(first.output())?.[1];
      expect(curlLine).toBeTruthy();
      const script = `${exportLines.join("\n")}\n${curlLine} -s -w '\\n%{http_code}'`;
      const { stdout } = await run("sh", ["-c", script]);
      expect(stdout.trim().split("\n").at(-1)).toBe("200");
      expect(JSON.parse(stdout.trim().split("\n")[0]!)).toMatchObject({ data: [] });
      // The secret appears in the banner only, never in a log line (the
      // curl's access-log line is written as its answer goes out).
      for (let i = 0; i < 200 && !first.output().includes('"request completed"'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const logLines = first
        .output()
        .split("\n")
        .filter((l) => l.startsWith("{"));
      expect(logLines.length).toBeGreaterThan(0);
      expect(logLines.join("\n")).not.toContain(secret!);
      expect(await first.stop()).toBe(0);

      // The second start names the folder to delete as seen from where it was started.
      const second = await start({ ...env, INIT_CWD: tmpdir() });
      expect(second.output()).not.toContain(secret!);
      expect(second.output()).toContain(`or delete ${relative(tmpdir(), dir)}`);
      const res = await fetch(`${second.baseUrl}/customers`, {
        headers: {
          Authorization: `Basic ${Buffer.from(`${tokenId}:${secret}`).toString("base64")}`,
        },
      });
      expect(res.status).toBe(200);
      await second.stop();
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
      await s.stop();
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
      await s.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a first run from a fresh clone", () => {
  it("starts with the default DATABASE_URL from an empty working directory", async () => {
    // ./data does not exist here, as in a fresh clone (git does not keep it).
    const cwd = mkdtempSync(join(tmpdir(), "sandbox-cwd-"));
    try {
      const s = await start({}, { cwd });
      expect(existsSync(join(cwd, "data", "sandbox.db"))).toBe(true);
      // The banner's lines, pasted into a shell as printed.
      const exportLines = s.output().match(/^\s*export SANDBOX_\S+=.*$/gm) ?? [];
      const curlLine = /^\s*(curl .*)$/m.exec(s.output())?.[1];
      const script = `${exportLines.join("\n")}\n${curlLine} -s -w '\\n%{http_code}'`;
      const { stdout } = await run("sh", ["-c", script]);
      expect(stdout.trim().split("\n").at(-1)).toBe("200");
      expect(await s.stop()).toBe(0);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});

describe("the README's start command, once installed", () => {
  it("reaches its banner without the package registry", async () => {
    // The start would reinstall (and need the registry) if the lock file
    // changed since the last install; that is not what this test is about.
    const installed = await run(process.execPath, ["scripts/ensure-installed.mjs", "--check"], {
      cwd: repoRoot,
    }).then(
      () => true,
      () => false,
    );
    expect(installed, "node_modules is stale: run `npm ci` before this test").toBe(true);
    const dir = mkdtempSync(join(tmpdir(), "sandbox-offline-"));
    // A registry that accepts connections and never answers, like a network
    // that is down: any request to it would hang the start.
    const connections: Socket[] = [];
    const registry = createServer((socket) => connections.push(socket));
    await new Promise<void>((resolve) => registry.listen(0, "127.0.0.1", resolve));
    const registryUrl = `http://127.0.0.1:${(registry.address() as AddressInfo).port}/`;
    const child = spawn("npm", ["run", "sandbox"], {
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? dir,
        npm_config_registry: registryUrl,
        TURBO_TELEMETRY_DISABLED: "1",
        DATABASE_URL: `file:${join(dir, "db.sqlite")}`,
        PORT: "0",
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    try {
      await new Promise<void>((resolve, reject) => {
        const poll = setInterval(() => {
          if (/Base URL:\s+http/.test(output)) {
            clearInterval(poll);
            resolve();
          }
        }, 100);
        child.once("exit", (code) => {
          clearInterval(poll);
          reject(new Error(`npm run sandbox exited with ${code}:\n${output}`));
        });
      });
      expect(output).not.toMatch(/npm (ci|install)|Installing dependencies/);
      expect(connections).toHaveLength(0);
    } finally {
      for (const socket of connections) socket.destroy();
      registry.close();
      // npm, turbo and the server: the whole process group.
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, "SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});

describe("settings the sandbox cannot run with", () => {
  const cases: { env: Record<string, string>; line: RegExp }[] = [
    { env: { LOG_LEVEL: "verbose" }, line: /LOG_LEVEL="verbose".*fatal, error, warn, info/ },
    {
      env: { VALIDATE_RESPONSES: "maybe" },
      line: /VALIDATE_RESPONSES="maybe".*true, false, 1 or 0/,
    },
    { env: { SQLITE_WRITER_THREAD: "yes" }, line: /SQLITE_WRITER_THREAD="yes".*true, false/ },
    { env: { PORT: "abc" }, line: /PORT="abc".*0 to 65535/ },
    { env: { JOB_POLL_MS: "-5" }, line: /JOB_POLL_MS="-5".*greater than 0/ },
    { env: { HOST: "192.0.2.1" }, line: /HOST="192\.0\.2\.1".*cannot listen/ },
    {
      env: { DATABASE_URL: "mysql://localhost/db" },
      line: /DATABASE_URL="mysql:\/\/localhost\/db".*file:/,
    },
    {
      env: { DATABASE_URL: "postgresql://sandbox:hunter2@127.0.0.1:1/sandbox?connection_limit=0" },
      line: /DATABASE_URL="postgresql:\/\/sandbox:\*\*\*@127\.0\.0\.1:1\/sandbox\?connection_limit=0".*connection_limit must be a whole number/,
    },
    {
      // Nothing listens on port 1: refused at once. The password is not shown.
      env: { DATABASE_URL: "postgresql://sandbox:hunter2@127.0.0.1:1/sandbox" },
      line: /DATABASE_URL="postgresql:\/\/sandbox:\*\*\*@127\.0\.0\.1:1\/sandbox".*ECONNREFUSED/,
    },
  ];

  const named = cases.map((c) => ({ ...c, name: Object.keys(c.env).join(", ") }));
  it.each(named)("a bad $name: one line naming it, and exit code 1", async ({ env, line }) => {
    const dir = mkdtempSync(join(tmpdir(), "sandbox-config-"));
    try {
      const { code, output, stderr } = await runUntilExit({
        DATABASE_URL: `file:${join(dir, "db.sqlite")}`,
        ...env,
      });
      expect(code).toBe(1);
      // One line on standard error; no stack trace anywhere.
      const lines = stderr.trim().split("\n");
      expect(lines, output).toHaveLength(1);
      expect(output).not.toMatch(/^\s+at /m);
      expect(lines[0]).toMatch(/^Configuration error: /);
      expect(lines[0]).toMatch(line);
      expect(output).not.toContain("hunter2");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("names PORT when the port is taken", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const dir = mkdtempSync(join(tmpdir(), "sandbox-config-"));
    try {
      const port = String((taken.address() as AddressInfo).port);
      const { code, stderr } = await runUntilExit({
        DATABASE_URL: `file:${join(dir, "db.sqlite")}`,
        PORT: port,
      });
      expect(code).toBe(1);
      expect(stderr.trim()).toBe(
        `Configuration error: PORT="${port}": already in use on 127.0.0.1; choose another, or 0 for a free one`,
      );
    } finally {
      taken.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.each(databases)("several processes starting at once on a fresh %s database", (kind) => {
  let database: TestDatabase;
  beforeEach(async () => {
    database = await freshDatabase(kind);
  });
  afterEach(async () => {
    await database.drop();
  });

  async function countRows(table: "Platform" | "ApiToken"): Promise<number> {
    if (kind === "sqlite") {
      const db = new Database(database.url.slice("file:".length), { readonly: true });
      try {
        return (db.prepare(`SELECT COUNT(*) AS n FROM "${table}"`).get() as { n: number }).n;
      } finally {
        db.close();
      }
    }
    const target = parseDatabaseUrl(database.url);
    const client = new pg.Client(pgPoolConfig(target));
    await client.connect();
    try {
      const { rows } = await client.query<{ n: string }>(`SELECT COUNT(*) AS n FROM "${table}"`);
      return Number(rows[0]!.n);
    } finally {
      await client.end();
    }
  }

  it("all start, and they share one platform and one new token", async () => {
    const processes = await Promise.all(
      [1, 2, 3].map(() => start({ DATABASE_URL: database.url, LOG_LEVEL: "warn" })),
    );
    const printed = processes.filter((p) => /Token id:/.test(p.output()));
    expect(printed).toHaveLength(1);
    expect(await countRows("Platform")).toBe(1);
    expect(await countRows("ApiToken")).toBe(1);
    // The one printed token works on every process.
    const tokenId = /Token id:\s+(\S+)/.exec(printed[0]!.output())![1];
    const secret = /Secret:\s+(\S+)/.exec(printed[0]!.output())![1];
    const auth = `Basic ${Buffer.from(`${tokenId}:${secret}`).toString("base64")}`;
    for (const p of processes) {
      const res = await fetch(`${p.baseUrl}/customers`, { headers: { Authorization: auth } });
      expect(res.status).toBe(200);
    }
    for (const p of processes) expect(await p.stop()).toBe(0);
  });

  it("all start with the same credentials from the environment", async () => {
    const env = {
      DATABASE_URL: database.url,
      LOG_LEVEL: "warn",
      SANDBOX_TOKEN_ID: "ci-token",
      SANDBOX_TOKEN_SECRET: "ci-secret",
    };
    const processes = await Promise.all([1, 2, 3].map(() => start(env)));
    expect(await countRows("Platform")).toBe(1);
    expect(await countRows("ApiToken")).toBe(1);
    for (const p of processes) expect(await p.stop()).toBe(0);
  });
});
