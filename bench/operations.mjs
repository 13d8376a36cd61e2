#!/usr/bin/env node
// Requests per second and p99 latency of several API operations at 50
// connections, in the same run: the sandbox server; a stateless Prism mock
// serving the same operation from openapi.yaml; and a bare node:http server
// answering the sandbox's own answer to that operation, the limit of a Node
// server on this machine. Each operation's share of that limit (sandbox
// req/s ÷ bare req/s) is in the summary.
//
//   npm run build                      (the server runs from apps/server/dist)
//   node bench/operations.mjs [--operations authorize,getCustomerById,listCustomers,createCustomer,otpLogin]
//        [--rounds 3] [--duration 8] [--warmup 3] [--connections 50]
//        [--logins 3000] [--database sqlite|postgresql]
//
// For each operation, the load goes to one target at a time, in rounds that
// rotate their order (sandbox, Prism, bare in round 1; Prism, bare, sandbox
// in round 2; and so on, so that each takes each place); the summary is the
// median round of each. The sandbox runs on a fresh database with response
// validation off, as a partner's CI would run it; every request is real (a
// create writes a customer and its event; an authorization debits the
// ledger). Non-2xx answers of any target are counted and reported: a run
// with any is not a valid measurement.
//
// The bare server (bare-server.mjs, a process of its own like Prism) serves
// the bytes, status and content type of one real sandbox answer to the
// operation's request, captured before the rounds and not measured (so
// createCustomer and authorize make one customer or authorization more).
//
// The OTP login (`otpLogin`) is measured leg by leg: the challenge, the
// verify that answers 202, and the signed retry that answers the session.
// Each of its requests can be made only once (a code is used up, a Request-Id
// is consumed), so a round is a batch of --logins logins, one per wallet:
// all their challenges at 50 connections, then (the bench seals each code to
// its target, unmeasured) all their verifies, then (stamped) all their
// retries. Prism answers the same three requests as often, and so do three
// bare servers, one per leg, each serving the sandbox's answer to that leg
// (from one more login, before the rounds); these rounds are otp-rounds.mjs.
// A batch is sent from a thread of its own (batch-thread.mjs) over
// connections it opened first, and each request is timed from its sending to
// its answer.
//
// BENCH_ANSWERS_DIR=<dir> writes each round's answers there (time since the
// round's start and latency, in ms), with the round's start on the clock of
// a server profile (BENCH_SERVER_NODE_ARGS=--cpu-prof), to line the slow
// answers up with what the server was doing.
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { measureOtpLogin, otpLegs } from "./otp-rounds.mjs";
import { measureRound, median, startBareServer, startPrism, startSandbox } from "./processes.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({
  options: {
    operations: {
      type: "string",
      default: "authorize,getCustomerById,listCustomers,createCustomer,otpLogin",
    },
    logins: { type: "string", default: "3000" },
    rounds: { type: "string", default: "3" },
    duration: { type: "string", default: "8" },
    warmup: { type: "string", default: "3" },
    connections: { type: "string", default: "50" },
    database: { type: "string", default: "sqlite" },
    "postgres-url": { type: "string", default: "postgresql://postgres@127.0.0.1:5432/test" },
  },
});
const rounds = Number(args.rounds);
const duration = Number(args.duration);
const warmup = Number(args.warmup);
const connections = Number(args.connections);
const logins = Number(args.logins);

const customerBody = {
  customerType: "INDIVIDUAL",
  fullName: "Bench Mark",
  email: "bench@example.com",
};
const purchase = {
  amount: 100,
  currency: { code: "USD" },
  merchant: { descriptor: "BENCH COFFEE", mcc: "5814", country: "US" },
};
// Ids in the form the spec's patterns accept, for Prism's static answers.
const PRISM_CUSTOMER = "Customer:019542f5-b3e7-1d02-0000-000000000001";
const PRISM_CARD = "Card:8bd59cec-f1bf-4f0a-a8d5-0d98de31f449";

/** Each operation: how to set it up on the sandbox, and its request on either target. */
const operations = {
  authorize: {
    title: "POST /sandbox/cards/{id}/simulate/authorization",
    async setUp(sandbox) {
      const customer = await sandbox.call("POST", "/customers", customerBody);
      // The customer's USD account was opened with it.
      const accounts = await sandbox.call(
        "GET",
        `/customers/internal-accounts?customerId=${customer.id}&currency=USD`,
      );
      const account = accounts.data[0];
      await sandbox.call("POST", `/sandbox/internal-accounts/${account.id}/fund`, {
        amount: 1_000_000_000_000,
      });
      const card = await sandbox.call("POST", "/cards", {
        cardholderId: customer.id,
        platformCardId: "bench-card-1",
        form: "VIRTUAL",
        fundingSources: [account.id],
      });
      return { card: card.id };
    },
    request: (ids) => ({
      method: "POST",
      path: `/sandbox/cards/${ids.card}/simulate/authorization`,
      body: purchase,
    }),
    prism: { card: PRISM_CARD },
  },
  getCustomerById: {
    title: "GET /customers/{id}",
    async setUp(sandbox) {
      const customer = await sandbox.call("POST", "/customers", customerBody);
      return { customer: customer.id };
    },
    request: (ids) => ({ method: "GET", path: `/customers/${ids.customer}` }),
    prism: { customer: PRISM_CUSTOMER },
  },
  listCustomers: {
    title: "GET /customers?limit=20",
    async setUp(sandbox) {
      for (let i = 0; i < 100; i++) await sandbox.call("POST", "/customers", customerBody);
      return {};
    },
    request: () => ({ method: "GET", path: "/customers?limit=20" }),
    prism: {},
  },
  createCustomer: {
    title: "POST /customers",
    setUp: async () => ({}),
    request: () => ({ method: "POST", path: "/customers", body: customerBody }),
    prism: {},
  },
};

const names = args.operations.split(",");
const chosen = names
  .filter((name) => name !== "otpLogin")
  .map((name) => {
    const operation = operations[name];
    if (!operation) throw new Error(`unknown operation ${name}`);
    return { name, ...operation };
  });
const withLogin = names.includes("otpLogin");

const SANDBOX = `sandbox (${args.database})`;
const PRISM = "Prism mock";
const BARE = "bare node:http";

/** The targets in the order of `round` (from 1): each round starts one further along. */
const inOrder = (targets, round) =>
  targets.map((_, i) => targets[(i + round - 1) % targets.length]);

/**
 * The sandbox's answer to `request` (as targetOf builds it), for the bare
 * server to serve: one real request, not measured. Its status, content type
 * and body bytes.
 */
async function captureAnswer({ url, method, headers, body }) {
  const res = await fetch(url, { method, headers, ...(body ? { body } : {}) });
  const bytes = Buffer.from(await res.arrayBuffer());
  if (!res.ok) throw new Error(`capturing ${method} ${url}: ${res.status} ${bytes}`);
  return {
    status: res.status,
    contentType: res.headers.get("content-type") ?? "application/json",
    body: bytes,
  };
}

function targetOf(label, base, headers, pid, { method, path, body }) {
  return {
    label,
    pid,
    request: {
      url: base + path,
      connections,
      method,
      headers,
      ...(body ? { body: JSON.stringify(body) } : {}),
    },
  };
}

const sandbox = await startSandbox(root, {
  database: args.database,
  postgresUrl: args["postgres-url"],
});
const prism = await startPrism(root).catch(async (err) => {
  await sandbox.stop();
  throw err;
});
const prismHeaders = { authorization: "Basic YTpi", "content-type": "application/json" };
const perRound = [];

try {
  for (const operation of chosen) {
    const ids = await operation.setUp(sandbox);
    const request = operation.request(ids);
    const mine = targetOf(SANDBOX, sandbox.base, sandbox.headers, sandbox.pid, request);
    const bare = await startBareServer(root, await captureAnswer(mine.request));
    try {
      const targets = [
        mine,
        targetOf(PRISM, prism.base, prismHeaders, prism.pid, operation.request(operation.prism)),
        // The sandbox's very request: same path, headers and body.
        targetOf(BARE, bare.base, sandbox.headers, bare.pid, request),
      ];
      for (const target of targets) await autocannon({ ...target.request, duration: warmup });
      for (let round = 1; round <= rounds; round++) {
        for (const target of inOrder(targets, round)) {
          perRound.push({
            operation: operation.name,
            round,
            ...(await measureRound(target, duration)),
          });
        }
      }
    } finally {
      await bare.stop();
    }
  }
  if (withLogin) {
    const otpRounds = await measureOtpLogin({
      root,
      sandbox,
      prism,
      prismHeaders,
      customerBody,
      labels: { sandbox: SANDBOX, prism: PRISM, bare: BARE },
      connections,
      logins,
      rounds,
      inOrder,
      captureAnswer,
    });
    perRound.push(...otpRounds);
  }
} finally {
  await prism.stop();
  await sandbox.stop();
}

console.log(
  `\n${cpus().length} × ${cpus()[0]?.model ?? "CPU"}, Node ${process.version}, ${connections} connections, ${args.database}, ${rounds} rounds of ${duration} s per target (after ${warmup} s warm-up each)\n`,
);
console.log(
  "| Operation | Round | Target | Requests/s | p50 ms | p99 ms | max ms | 2xx | non-2xx | errors | server CPU µs/request | PostgreSQL CPU µs/request | steal % |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of perRound) {
  console.log(
    `| ${r.operation} | ${r.round} | ${r.label} | ${r.requestsPerSecond.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.max} | ${r.ok} | ${r.non2xx} | ${r.errors} | ${r.serverCpuUsPerRequest ?? "n/a"} | ${r.postgresCpuUsPerRequest ?? "n/a"} | ${r.stealPercent ?? "n/a"} |`,
  );
}
console.log("\nMedian of the rounds:\n");
console.log(
  "| Operation | Sandbox req/s | Sandbox p99 ms | Prism req/s | Prism p99 ms | Sandbox ÷ Prism | Sandbox CPU µs/request | PostgreSQL CPU µs/request | Bare req/s | Bare p99 ms | Share of bare (sandbox ÷ bare) |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|");
const summary = [...chosen, ...(withLogin ? otpLegs : [])].map((operation) => {
  const of = (label) => perRound.filter((r) => r.operation === operation.name && r.label === label);
  const mine = of(SANDBOX);
  const theirs = of(PRISM);
  const limit = of(BARE);
  const sandboxRate = median(mine.map((r) => r.requestsPerSecond));
  const bareRate = median(limit.map((r) => r.requestsPerSecond));
  return {
    operation: operation.title,
    sandbox: sandboxRate,
    sandboxP99: median(mine.map((r) => r.p99)),
    prism: median(theirs.map((r) => r.requestsPerSecond)),
    prismP99: median(theirs.map((r) => r.p99)),
    cpu: median(mine.map((r) => r.serverCpuUsPerRequest ?? 0)),
    postgresCpu: median(mine.map((r) => r.postgresCpuUsPerRequest ?? 0)),
    bare: bareRate,
    bareP99: median(limit.map((r) => r.p99)),
    shareOfBare: sandboxRate / bareRate,
    // Any target answering anything but success makes the comparison invalid.
    non2xx: [...mine, ...theirs, ...limit].reduce((n, r) => n + r.non2xx + r.errors, 0),
  };
});
for (const s of summary) {
  console.log(
    `| ${s.operation} | ${s.sandbox.toFixed(0)} | ${s.sandboxP99} | ${s.prism.toFixed(0)} | ${s.prismP99} | ${(s.sandbox / s.prism).toFixed(2)} | ${s.cpu} | ${s.postgresCpu} | ${s.bare.toFixed(0)} | ${s.bareP99} | ${(100 * s.shareOfBare).toFixed(1)} % |`,
  );
}
const failed = summary.filter((s) => s.non2xx > 0);
if (failed.length > 0) {
  console.log(
    `\nNOT VALID: non-2xx answers or errors in ${failed.map((s) => s.operation).join(", ")}`,
  );
  process.exitCode = 1;
}
console.log(`\n${JSON.stringify({ perRound, summary })}`);
