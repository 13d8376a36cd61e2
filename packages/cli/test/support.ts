import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient, type SandboxClient, type Schemas } from "@payments-sandbox/client";

// The CLI as a partner runs it (the package's bin)
// against the sandbox as a partner runs it (`node apps/server/dist/main.js`
// in a process of its own, on a fresh SQLite database). Both are built by
// turbo before the tests (the server is a dev dependency for that reason).

const here = dirname(fileURLToPath(import.meta.url));
export const cliBin = join(here, "..", "bin", "payments-sandbox.js");
const serverMain = join(here, "..", "..", "..", "apps", "server", "dist", "main.js");

export interface LiveSandbox {
  baseUrl: string;
  /** The sandbox's own platform's credentials, as the environment the CLI reads. */
  rootEnv: Record<string, string>;
  stop(): Promise<void>;
}

/** Starts the sandbox server and waits for its banner. */
export async function startLiveSandbox(): Promise<LiveSandbox> {
  const dir = mkdtempSync(join(tmpdir(), "cli-test-"));
  const tokenId = `cli-root-${randomBytes(4).toString("hex")}`;
  const secret = randomBytes(24).toString("base64url");
  const child = spawn(process.execPath, [serverMain], {
    env: {
      PATH: process.env.PATH ?? "",
      PORT: "0",
      LOG_LEVEL: "warn",
      DATABASE_URL: `file:${join(dir, "sandbox.db")}`,
      SANDBOX_TOKEN_ID: tokenId,
      SANDBOX_TOKEN_SECRET: secret,
      // Quick retries and polls, so a test waits for deliveries briefly.
      WEBHOOK_POLL_MS: "50",
      WEBHOOK_RETRY_BASE_MS: "100",
      WEBHOOK_RETRY_MAX_DELAY_MS: "400",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const baseUrl = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const m = /Base URL:\s+(\S+)/.exec(output);
      if (m) {
        child.stdout!.off("data", onData);
        resolve(m[1]!);
      }
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`sandbox exited with ${code}:\n${output}`)));
  });
  return {
    baseUrl,
    rootEnv: { SANDBOX_BASE_URL: baseUrl, SANDBOX_TOKEN_ID: tokenId, SANDBOX_TOKEN_SECRET: secret },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The CLI with these arguments and only this environment; resolves when it exits. */
export function cli(args: readonly string[], env: Record<string, string>): Promise<CliResult> {
  const child = startCli(args, env);
  return child.exited;
}

export interface RunningCli {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<CliResult>;
}

/** The CLI running in the background (for `listen`). */
export function startCli(args: readonly string[], env: Record<string, string>): RunningCli {
  // From a folder outside the repository, as a partner runs it.
  const child = spawn(process.execPath, [cliBin, ...args], {
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? "", NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<CliResult>((resolve) =>
    child.once("close", (code) => resolve({ code, stdout, stderr })),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** A platform made by `platforms create --json`, with the environment that uses it. */
export interface TestPlatform {
  created: Schemas["SandboxPlatformCreated"];
  env: Record<string, string>;
  client: SandboxClient;
}

export async function createTestPlatform(sandbox: LiveSandbox, name: string) {
  const result = await cli(["platforms", "create", "--name", name, "--json"], sandbox.rootEnv);
  if (result.code !== 0) throw new Error(`platforms create: ${result.stderr}`);
  const created = JSON.parse(result.stdout) as Schemas["SandboxPlatformCreated"];
  const env = {
    SANDBOX_BASE_URL: sandbox.baseUrl,
    SANDBOX_TOKEN_ID: created.clientId,
    SANDBOX_TOKEN_SECRET: created.clientSecret,
  };
  const client = createClient({
    baseUrl: sandbox.baseUrl,
    tokenId: created.clientId,
    secret: created.clientSecret,
  });
  return { created, env, client } satisfies TestPlatform;
}

export async function waitFor(what: string, check: () => boolean | Promise<boolean>) {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface ReceivedWebhook {
  body: string;
  /** X-Grid-Signature as forwarded. */
  signature: string | undefined;
  /** X-Service-Signature (the deprecated name) as forwarded. */
  legacySignature: string | undefined;
}

/** The partner's own endpoint that `listen --forward-to` forwards to. */
export async function startForwardTarget(): Promise<{
  url: string;
  received: ReceivedWebhook[];
  close(): Promise<void>;
}> {
  const received: ReceivedWebhook[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      const first = (value: string | string[] | undefined) =>
        Array.isArray(value) ? value[0] : value;
      received.push({
        body,
        signature: first(req.headers["x-grid-signature"]),
        legacySignature: first(req.headers["x-service-signature"]),
      });
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
