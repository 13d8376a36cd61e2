#!/usr/bin/env node
// Simulated card authorizations per second, and p99 latency, at 50
// connections: the sandbox server against a stateless Prism mock serving the
// same operation from openapi.yaml, measured in the same run.
//
//   npm run build                      (the server runs from apps/server/dist)
//   node bench/card-authorizations.mjs [--duration 20] [--connections 50]
//        [--database sqlite|postgresql] [--validate-responses] [--no-prism]
//
// The server runs as its own process, on a fresh database, with LOG_LEVEL=warn
// and response validation off unless --validate-responses is given. Every
// measured request is a real authorization: a guarded debit of the funding
// source, the card transaction, its pull and its outbox event. Afterwards the
// script checks that the balance fell by exactly the approved amount.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import autocannon from "autocannon";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "20" },
    warmup: { type: "string", default: "5" },
    connections: { type: "string", default: "50" },
    database: { type: "string", default: "sqlite" },
    "validate-responses": { type: "boolean", default: false },
    "no-prism": { type: "boolean", default: false },
    "postgres-url": { type: "string", default: "postgresql://postgres@127.0.0.1:5432/test" },
  },
});
const duration = Number(args.duration);
const warmup = Number(args.warmup);
const connections = Number(args.connections);
const VERSION = "/2025-10-13";
const AMOUNT = 100;
const purchase = JSON.stringify({
  amount: AMOUNT,
  currency: { code: "USD" },
  merchant: { descriptor: "BENCH COFFEE", mcc: "5814", country: "US" },
});

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function start(command, argv, env, readyText) {
  const child = spawn(command, argv, { cwd: root, env: { ...process.env, ...env } });
  let output = "";
  const ready = new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk;
      if (output.includes(readyText)) resolve();
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`${command} exited (${code}):\n${output}`)));
  });
  return { child, ready };
}

async function stop(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGINT");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

/** CPU time (user + system, ms) a process has used so far; undefined off Linux. */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    // utime and stime, in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

async function load(url, headers, label, pid) {
  const common = { url, connections, method: "POST", headers, body: purchase };
  await autocannon({ ...common, duration: warmup });
  const load1 = loadavg()[0];
  const cpuBefore = cpuMs(pid);
  const r = await autocannon({ ...common, duration });
  const cpuAfter = cpuMs(pid);
  const served = r["2xx"] + r.non2xx;
  return {
    serverCpuUsPerRequest:
      cpuBefore === undefined || cpuAfter === undefined || served === 0
        ? undefined
        : Math.round(((cpuAfter - cpuBefore) * 1000) / served),
    label,
    requestsPerSecond: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    ok: r["2xx"],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    loadAverageBefore: Number(load1.toFixed(2)),
  };
}

async function benchSandbox() {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "bench-cards-"));
  const schema = `bench_${randomBytes(4).toString("hex")}`;
  const databaseUrl =
    args.database === "postgresql"
      ? `${args["postgres-url"]}?schema=${schema}`
      : `file:${join(dir, "sandbox.db")}`;
  const tokenId = "bench-token";
  const secret = randomBytes(24).toString("base64url");
  const { child, ready } = start(
    process.execPath,
    // e.g. BENCH_SERVER_NODE_ARGS=--cpu-prof to see where the server's time goes.
    [
      ...(process.env.BENCH_SERVER_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
      process.env.BENCH_MAIN ?? "apps/server/dist/main.js",
    ],
    {
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      SANDBOX_TOKEN_ID: tokenId,
      SANDBOX_TOKEN_SECRET: secret,
      LOG_LEVEL: "warn",
      VALIDATE_RESPONSES: String(args["validate-responses"]),
    },
    "Base URL",
  );
  try {
    await ready;
    const base = `http://127.0.0.1:${port}${VERSION}`;
    const headers = {
      authorization: `Basic ${Buffer.from(`${tokenId}:${secret}`).toString("base64")}`,
      "content-type": "application/json",
    };
    const call = async (method, path, body) => {
      const res = await fetch(base + path, {
        method,
        headers,
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const json = await res.json();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
      return json;
    };
    const customer = await call("POST", "/customers", {
      customerType: "INDIVIDUAL",
      personalInfo: { firstName: "Bench", lastName: "Mark", email: "bench@example.com" },
    });
    const account = await call("POST", "/internal-accounts", {
      customerId: customer.id,
      currency: "USD",
      type: "STANDARD",
    });
    const funds = 1_000_000_000_000;
    await call("POST", `/sandbox/internal-accounts/${account.id}/fund`, { amount: funds });
    const card = await call("POST", "/cards", {
      cardholderId: customer.id,
      platformCardId: "bench-card-1",
      form: "VIRTUAL",
      fundingSources: [account.id],
    });
    const active = await call("GET", `/cards/${card.id}`);
    if (active.state !== "ACTIVE") throw new Error(`card is ${active.state}`);

    const result = await load(
      `${base}/sandbox/cards/${card.id}/simulate/authorization`,
      headers,
      `sandbox (${args.database}, response validation ${args["validate-responses"] ? "on" : "off"})`,
      child.pid,
    );
    // Every approved authorization is in the ledger, and nothing else is.
    const after = await call("GET", `/internal-accounts/${account.id}`);
    const approvedTotal = funds - after.balance;
    const warmAndMeasured = approvedTotal / AMOUNT;
    result.balanceCheck = `balance fell by ${approvedTotal} = ${warmAndMeasured} authorizations of ${AMOUNT} (warm-up included)`;
    return result;
  } finally {
    await stop(child);
    rmSync(dir, { recursive: true, force: true });
    if (args.database === "postgresql") {
      const pg = (await import("pg")).default;
      const client = new pg.Client({ connectionString: args["postgres-url"] });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  }
}

async function benchPrism() {
  const port = await freePort();
  const prism = join(root, "node_modules", ".bin", "prism");
  const { child, ready } = start(
    prism,
    ["mock", "openapi.yaml", "--port", String(port), "--verboseLevel", "warn", "--cors", "false"],
    {},
    "Prism is listening",
  );
  // With --verboseLevel warn Prism does not print its banner: poll instead.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const up = await fetch(`http://127.0.0.1:${port}/cards`, {
      headers: { authorization: "Basic YTpi" },
    }).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      await ready.catch((err) => {
        throw err;
      });
      throw new Error("Prism did not start");
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  ready.catch(() => undefined);
  try {
    return await load(
      `http://127.0.0.1:${port}/sandbox/cards/Card:8bd59cec-f1bf-4f0a-a8d5-0d98de31f449/simulate/authorization`,
      { authorization: "Basic YTpi", "content-type": "application/json" },
      "Prism mock (stateless, static example)",
      child.pid,
    );
  } finally {
    await stop(child);
  }
}

const results = [await benchSandbox()];
if (!args["no-prism"]) results.push(await benchPrism());

console.log(
  `\n${cpus().length} × ${cpus()[0]?.model ?? "CPU"}, Node ${process.version}, ${connections} connections, ${duration} s (after ${warmup} s warm-up)\n`,
);
console.log(
  "| Target | Requests/s (mean) | p50 ms | p99 ms | max ms | 2xx | non-2xx | errors | server CPU µs/request | load avg before |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|");
for (const r of results) {
  console.log(
    `| ${r.label} | ${r.requestsPerSecond.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.max} | ${r.ok} | ${r.non2xx} | ${r.errors + r.timeouts} | ${r.serverCpuUsPerRequest ?? "n/a"} | ${r.loadAverageBefore} |`,
  );
}
for (const r of results) if (r.balanceCheck) console.log(`\n${r.label}: ${r.balanceCheck}`);
console.log(`\n${JSON.stringify(results)}`);
