#!/usr/bin/env node
// The cost of the first request of each operation on a fresh server process
// (which compiles that operation's validators), against the same request once
// warm, and the steady-state cost of one operation.
//
//   npm run build                      (the server runs from apps/server/dist)
//   node bench/first-requests.mjs [--processes 3] [--steady 2000]
//        [--validate-responses true|false] [--main apps/server/dist/main.js[,other/main.js]]
//
// Each process is fresh (SQLite in a temporary folder) and serves one
// sequence of operations, each one's first request followed at once by a
// second of the same kind. For each request: its wall time seen by this
// client and the server's CPU time over it (/proc, 10 ms ticks: steadier than
// wall time on a loaded machine); the figures are medians over the
// processes. "Ready" is the time from spawning the server to its "Base URL"
// line. Steady state: --steady sequential `GET /customers/{id}` after 200 of
// warm-up, with the server's CPU per request. Several --main builds (comma
// separated) take turns, one process each, so they share the machine's load.
// BENCH_SERVER_NODE_ARGS=--cpu-prof profiles the server.
import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { cpuMs, median, startSandbox } from "./processes.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({
  options: {
    processes: { type: "string", default: "3" },
    steady: { type: "string", default: "2000" },
    "validate-responses": { type: "string", default: "true" },
    main: { type: "string", default: "apps/server/dist/main.js" },
  },
});
const processes = Number(args.processes);
const steady = Number(args.steady);
const validateResponses = args["validate-responses"] === "true";

const bank = (suffix) => ({
  accountType: "USD_ACCOUNT",
  accountNumber: `0004567${suffix}`,
  routingNumber: "021000021",
  beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Ada Lovelace" },
});
const purchase = (descriptor) => ({
  amount: 100,
  currency: { code: "USD" },
  merchant: { descriptor, mcc: "5814", country: "US" },
});

/**
 * The operations in the order they run; each `request(ids, n)` is sent twice
 * (n = 1, 2) and `keep` stores what later operations need from the answer.
 */
const operations = [
  {
    title: "POST /customers",
    request: (_ids, n) => ({
      method: "POST",
      path: "/customers",
      body: { customerType: "INDIVIDUAL", fullName: `Ada ${n}`, email: `ada${n}@example.com` },
    }),
    keep: (ids, json) => (ids.customers ??= []).push(json.id),
  },
  { title: "GET /customers", request: () => ({ method: "GET", path: "/customers?limit=20" }) },
  {
    title: "GET /customers/{id}",
    request: (ids) => ({ method: "GET", path: `/customers/${ids.customers[0]}` }),
  },
  {
    title: "GET /customers/internal-accounts",
    request: (ids, n) => ({
      method: "GET",
      path: `/customers/internal-accounts?customerId=${ids.customers[n - 1]}&currency=USD`,
    }),
    // A card refuses a funding account whose id ends in 002 or 003 (sandbox
    // rules): the first customer's account, else the second's.
    keep: (ids, json) => {
      const account = json.data[0];
      if (ids.account === undefined && !/00[23]$/.test(account.id)) {
        ids.account = account.id;
        ids.holder = account.customerId;
      }
    },
  },
  {
    title: "POST /sandbox/internal-accounts/{id}/fund",
    request: (ids) => ({
      method: "POST",
      path: `/sandbox/internal-accounts/${ids.account}/fund`,
      body: { amount: 1_000_000 },
    }),
  },
  {
    title: "POST /customers/external-accounts",
    request: (ids, n) => ({
      method: "POST",
      path: "/customers/external-accounts",
      body: { customerId: ids.holder, currency: "USD", accountInfo: bank(`78${n + 8}`) },
    }),
    keep: (ids, json) => (ids.bank ??= json.id),
  },
  {
    title: "GET /customers/external-accounts",
    request: (ids) => ({
      method: "GET",
      path: `/customers/external-accounts?customerId=${ids.holder}`,
    }),
  },
  {
    title: "POST /cards",
    request: (ids, n) => ({
      method: "POST",
      path: "/cards",
      body: {
        cardholderId: ids.holder,
        platformCardId: `first-requests-${n}`,
        form: "VIRTUAL",
        fundingSources: [ids.account],
      },
    }),
    keep: (ids, json) => (ids.card ??= json.id),
  },
  {
    title: "POST /sandbox/cards/{id}/simulate/authorization",
    request: (ids, n) => ({
      method: "POST",
      path: `/sandbox/cards/${ids.card}/simulate/authorization`,
      body: purchase(`BENCH COFFEE ${n}`),
    }),
  },
  { title: "GET /transactions", request: () => ({ method: "GET", path: "/transactions" }) },
  {
    title: "POST /quotes",
    request: (ids) => ({
      method: "POST",
      path: "/quotes",
      body: {
        source: { sourceType: "INTERNAL_ACCOUNT", internalAccountId: ids.account },
        destination: { destinationType: "EXTERNAL_ACCOUNT", externalAccountId: ids.bank },
        lockedCurrencySide: "SENDING",
        lockedCurrencyAmount: 10_000,
      },
    }),
  },
  { title: "GET /config", request: () => ({ method: "GET", path: "/config" }) },
];

/** One request: wall time and server CPU (ms), and its JSON answer; throws on a non-2xx answer. */
async function timed(sandbox, { method, path, body }) {
  const cpuBefore = cpuMs(sandbox.pid);
  const started = performance.now();
  const res = await fetch(sandbox.base + path, {
    method,
    headers: sandbox.headers,
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const json = await res.json();
  const ms = performance.now() - started;
  const cpu = cpuMs(sandbox.pid) - cpuBefore;
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return { ms, cpu, json };
}

/** A process's resident memory (MB); NaN off Linux. */
function rssMb(pid) {
  try {
    const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB/m);
    return line ? Number(line[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** One fresh process of `main`: its figures, added to `into`. */
async function measure(main, into) {
  const spawned = performance.now();
  const sandbox = await startSandbox(root, { database: "sqlite", validateResponses, main });
  into.ready.push(performance.now() - spawned);
  try {
    const ids = {};
    for (const [i, operation] of operations.entries()) {
      for (const n of [1, 2]) {
        const { ms, cpu, json } = await timed(sandbox, operation.request(ids, n));
        into[n === 1 ? "first" : "second"][i].push({ ms, cpu });
        operation.keep?.(ids, json);
      }
    }
    into.rssMb.push(rssMb(sandbox.pid));
    if (steady > 0) {
      const one = { method: "GET", path: `/customers/${ids.customers[0]}` };
      for (let i = 0; i < 200; i++) await timed(sandbox, one);
      const cpuBefore = cpuMs(sandbox.pid);
      const started = performance.now();
      for (let i = 0; i < steady; i++) await timed(sandbox, one);
      into.steadyUs.push(((performance.now() - started) * 1000) / steady);
      into.steadyCpuUs.push(((cpuMs(sandbox.pid) - cpuBefore) * 1000) / steady);
    }
  } finally {
    await sandbox.stop();
  }
}

const mains = args.main.split(",");
const results = mains.map(() => ({
  ready: [],
  first: operations.map(() => []),
  second: operations.map(() => []),
  steadyUs: [],
  steadyCpuUs: [],
  rssMb: [],
}));
for (let p = 0; p < processes; p++) {
  for (const [m, main] of mains.entries()) await measure(main, results[m]);
}

const f = (ms) => ms.toFixed(ms < 10 ? 1 : 0);
const med = (runs, key) => median(runs.map((r) => r[key]));
const sum = (lists, key) => lists.reduce((total, runs) => total + med(runs, key), 0);
console.log(
  `\n${cpus().length} × ${cpus()[0]?.model ?? "CPU"}, Node ${process.version}, response validation ${validateResponses ? "on" : "off"}, median of ${processes} fresh processes per build, load average ${loadavg()[0].toFixed(1)} at the end`,
);
for (const [m, main] of mains.entries()) {
  const r = results[m];
  console.log(
    `\n${main}: ready (spawn to listening) ${f(median(r.ready))} ms, resident memory after the ${operations.length} operations ${f(median(r.rssMb))} MB\n`,
  );
  console.log(
    "| Operation | First request ms | First request server CPU ms | Second request ms | Second request server CPU ms |",
  );
  console.log("|---|---|---|---|---|");
  for (const [i, operation] of operations.entries()) {
    const [first, second] = [r.first[i], r.second[i]];
    console.log(
      `| \`${operation.title}\` | ${f(med(first, "ms"))} | ${f(med(first, "cpu"))} | ${f(med(second, "ms"))} | ${f(med(second, "cpu"))} |`,
    );
  }
  console.log(
    `| All ${operations.length} (sum) | ${f(sum(r.first, "ms"))} | ${f(sum(r.first, "cpu"))} | ${f(sum(r.second, "ms"))} | ${f(sum(r.second, "cpu"))} |`,
  );
  if (r.steadyUs.length) {
    console.log(
      `\nSteady state, ${steady} sequential GET /customers/{id}: ${median(r.steadyUs).toFixed(0)} µs/request wall, server CPU ${median(r.steadyCpuUs).toFixed(0)} µs/request (per process: ${r.steadyCpuUs.map((us) => us.toFixed(0)).join(", ")})`,
    );
  }
}
