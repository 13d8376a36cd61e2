// Runs every Arazzo workflow in this folder with `redocly respect`.
//
//   npm test -w @payments-sandbox/workflows
//       Starts a sandbox of this repository (built by `npm run build`) on a
//       fresh SQLite database, runs the workflows against it, stops it.
//   WORKFLOWS_API_URL=https://host/2025-10-13 SANDBOX_TOKEN_ID=... SANDBOX_TOKEN_SECRET=... npm test -w @payments-sandbox/workflows
//       Runs them against that host instead; only the local wallet key
//       holder is started. OTP_ENCLAVE_PUBLIC_KEY makes the key holder check
//       OTP bundles; MOVE_SANDBOX_CLOCK=true only for a host that is this
//       sandbox.
//
// Exits 1 when any step fails. Respect's schema check is reported as a
// warning (docs/workflows.md says why: its validator cannot compile the
// contract's discriminated unions); this script still fails on any schema
// warning but that one, and the sandbox it starts checks every response
// against openapi.yaml itself.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startWalletKeys } from "./wallet-keys.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const log = (line: string) => process.stdout.write(`${line}\n`);

// The one schema-check failure tolerated: Ajv refusing to compile a
// discriminator whose branches inherit the property from a shared base.
const UNCOMPILABLE_DISCRIMINATOR =
  /^Ajv error: discriminator: "[^"]+" values must be unique strings$/;

interface Api {
  baseUrl: string;
  tokenId: string;
  secret: string;
}

/** Starts this repository's sandbox on a fresh SQLite file; resolves once it is healthy. */
async function startSandbox(dir: string): Promise<Api & { stop: () => Promise<void> }> {
  const tokenId = `workflows-${randomBytes(4).toString("hex")}`;
  const secret = randomBytes(24).toString("base64url");
  const main = join(root, "..", "apps", "server", "dist", "main.js");
  // The banner must name the address the server listens on.
  const { PUBLIC_BASE_URL: _ignored, ...inherited } = process.env;
  const child = spawn(process.execPath, [main], {
    env: {
      ...inherited,
      DATABASE_URL: `file:${join(dir, "sandbox.db")}`,
      HOST: "127.0.0.1",
      PORT: "0",
      SANDBOX_TOKEN_ID: tokenId,
      SANDBOX_TOKEN_SECRET: secret,
      LOG_LEVEL: "warn",
      // Every response is checked against openapi.yaml by the sandbox itself.
      VALIDATE_RESPONSES: "true",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  // The banner names the base URL once the server listens.
  const baseUrl = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const match = /Base URL:\s+(\S+)/.exec(out);
      if (match?.[1]) resolve(match[1]);
    });
    void exited.then((code) =>
      reject(new Error(`the sandbox exited (${code}) before listening:\n${out}`)),
    );
  });
  const origin = new URL(baseUrl).origin;
  for (let attempt = 0; ; attempt++) {
    const res = await fetch(`${origin}/healthz`).catch(() => undefined);
    if (res?.ok) break;
    if (attempt > 100) throw new Error("the sandbox never became healthy");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    baseUrl,
    tokenId,
    secret,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** The sandbox's OTP enclave key, which signs every OTP target bundle. */
async function enclaveKeyOf(api: Api): Promise<string> {
  const res = await fetch(`${api.baseUrl}/sandbox/keys`, {
    headers: {
      Authorization: `Basic ${Buffer.from(`${api.tokenId}:${api.secret}`).toString("base64")}`,
    },
  });
  if (!res.ok) throw new Error(`GET /sandbox/keys answered ${res.status}`);
  return ((await res.json()) as { otpEnclavePublicKey: string }).otpEnclavePublicKey;
}

function runRespect(
  files: string[],
  options: { api: Api; walletKeysUrl: string; moveSandboxClock: boolean; jsonOutput: string },
): Promise<number> {
  const cli = join(dirname(require.resolve("@redocly/cli/package.json")), "bin", "cli.js");
  const args = [
    cli,
    "respect",
    ...files,
    "--server",
    `api=${options.api.baseUrl}`,
    "--server",
    `walletKeys=${options.walletKeysUrl}`,
    "--severity",
    JSON.stringify({ SCHEMA_CHECK: "warn" }),
    "--json-output",
    options.jsonOutput,
  ];
  // Inputs through the environment keep the secret off the command line.
  const inputs: Record<string, string | boolean> = {
    tokenId: options.api.tokenId,
    clientSecret: options.api.secret,
  };
  if (options.moveSandboxClock) inputs.moveSandboxClock = true;
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, REDOCLY_CLI_RESPECT_INPUT: JSON.stringify(inputs), NO_COLOR: "1" },
    stdio: "inherit",
  });
  return new Promise((resolve) => child.once("exit", (code) => resolve(code ?? 1)));
}

// The parts of respect's JSON report (--json-output) read here.
interface Check {
  name: string;
  passed: boolean;
  message?: string;
}
interface Executed {
  type: "step" | "workflow";
  stepId?: string;
  workflowId?: string;
  retriesLeft?: number;
  checks?: Check[];
  executedSteps?: Executed[];
}
interface Report {
  files?: Record<string, { executedWorkflows?: Executed[] }>;
}

/** Every failed check in the report, nested workflows included. */
function failedChecks(report: Report) {
  const failed: { file: string; workflowId?: string; stepId?: string; check: Check }[] = [];
  const walk = (file: string, workflowId: string | undefined, entries: Executed[] = []) => {
    for (const entry of entries) {
      if (entry.type === "workflow") {
        walk(file, entry.workflowId, entry.executedSteps);
        continue;
      }
      // An attempt that a retry replaced does not count (respect's own rule).
      if (entry.retriesLeft) continue;
      for (const check of entry.checks ?? []) {
        if (!check.passed) failed.push({ file, workflowId, stepId: entry.stepId, check });
      }
    }
  };
  for (const [file, result] of Object.entries(report.files ?? {})) {
    walk(file, undefined, result.executedWorkflows);
  }
  return failed;
}

const external = process.env.WORKFLOWS_API_URL;
const scratch = await mkdtemp(join(tmpdir(), "workflows-"));
let sandbox: Awaited<ReturnType<typeof startSandbox>> | undefined;
let walletKeys: Awaited<ReturnType<typeof startWalletKeys>> | undefined;
let code = 1;
try {
  const api: Api = external
    ? {
        baseUrl: external.replace(/\/$/, ""),
        tokenId: process.env.SANDBOX_TOKEN_ID ?? "",
        secret: process.env.SANDBOX_TOKEN_SECRET ?? "",
      }
    : (sandbox = await startSandbox(scratch));
  if (!api.tokenId || !api.secret) {
    throw new Error("set SANDBOX_TOKEN_ID and SANDBOX_TOKEN_SECRET with WORKFLOWS_API_URL");
  }
  const enclavePublicKey = external
    ? process.env.OTP_ENCLAVE_PUBLIC_KEY || undefined
    : await enclaveKeyOf(api);
  walletKeys = await startWalletKeys({ enclavePublicKey });
  log(`workflows against ${api.baseUrl}; wallet key holder at ${walletKeys.url}`);

  const files = (await readdir(root)).filter((name) => name.endsWith(".arazzo.yaml")).sort();
  const jsonOutput = join(scratch, "respect.json");
  const exitCode = await runRespect(files, {
    api,
    walletKeysUrl: walletKeys.url,
    moveSandboxClock: external ? process.env.MOVE_SANDBOX_CLOCK === "true" : true,
    jsonOutput,
  });

  const report = JSON.parse(await readFile(jsonOutput, "utf8")) as Report;
  const problems = failedChecks(report).filter(
    ({ check }) =>
      !(check.name === "schema check" && UNCOMPILABLE_DISCRIMINATOR.test(check.message ?? "")),
  );
  for (const { file, workflowId, stepId, check } of problems) {
    console.error(`${file} ${workflowId} ${stepId}: ${check.name}: ${check.message}`);
  }
  const workflows = Object.values(report.files ?? {}).reduce(
    (n, result) => n + (result.executedWorkflows?.length ?? 0),
    0,
  );
  if (exitCode !== 0 || problems.length > 0 || workflows === 0) {
    console.error(
      `workflows failed (respect exit code ${exitCode}, ${problems.length} failed checks)`,
    );
  } else {
    log(`${workflows} workflows in ${files.length} files passed`);
    code = 0;
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
} finally {
  await walletKeys?.stop();
  await sandbox?.stop();
  await rm(scratch, { recursive: true, force: true });
}
process.exit(code);
