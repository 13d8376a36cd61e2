#!/usr/bin/env node
// Requests per second and p99 latency of several API operations at 50
// connections: the sandbox server against a stateless Prism mock serving the
// same operation from openapi.yaml, in the same run.
//
//   npm run build                      (the server runs from apps/server/dist)
//   node bench/operations.mjs [--operations authorize,getCustomerById,listCustomers,createCustomer]
//        [--rounds 3] [--duration 8] [--warmup 3] [--connections 50]
//        [--database sqlite|postgresql]
//
// For each operation, the load goes to one target at a time, in rounds that
// alternate between them (sandbox first in odd rounds, Prism first in even
// ones); the summary is the median round of each. The sandbox runs on a
// fresh database with response validation off, as a partner's CI would run
// it; every request is real (a create writes a customer and its event; an
// authorization debits the ledger). Non-2xx answers are counted and reported:
// a run with any is not a valid measurement.
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { measureRound, median, startPrism, startSandbox } from "./processes.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({
  options: {
    operations: {
      type: "string",
      default: "authorize,getCustomerById,listCustomers,createCustomer",
    },
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

const chosen = args.operations.split(",").map((name) => {
  const operation = operations[name];
  if (!operation) throw new Error(`unknown operation ${name}`);
  return { name, ...operation };
});

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
    const targets = [
      targetOf(
        `sandbox (${args.database})`,
        sandbox.base,
        sandbox.headers,
        sandbox.pid,
        operation.request(ids),
      ),
      targetOf(
        "Prism mock",
        prism.base,
        prismHeaders,
        prism.pid,
        operation.request(operation.prism),
      ),
    ];
    for (const target of targets) await autocannon({ ...target.request, duration: warmup });
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 === 1 ? targets : [...targets].reverse();
      for (const target of order) {
        perRound.push({
          operation: operation.name,
          round,
          ...(await measureRound(target, duration)),
        });
      }
    }
  }
} finally {
  await prism.stop();
  await sandbox.stop();
}

console.log(
  `\n${cpus().length} × ${cpus()[0]?.model ?? "CPU"}, Node ${process.version}, ${connections} connections, ${args.database}, ${rounds} rounds of ${duration} s per target (after ${warmup} s warm-up each)\n`,
);
console.log(
  "| Operation | Round | Target | Requests/s | p50 ms | p99 ms | max ms | 2xx | non-2xx | errors | server CPU µs/request | steal % |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of perRound) {
  console.log(
    `| ${r.operation} | ${r.round} | ${r.label} | ${r.requestsPerSecond.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.max} | ${r.ok} | ${r.non2xx} | ${r.errors} | ${r.serverCpuUsPerRequest ?? "n/a"} | ${r.stealPercent ?? "n/a"} |`,
  );
}
console.log("\nMedian of the rounds:\n");
console.log(
  "| Operation | Sandbox req/s | Sandbox p99 ms | Prism req/s | Prism p99 ms | Sandbox ÷ Prism | Sandbox CPU µs/request |",
);
console.log("|---|---|---|---|---|---|---|");
const summary = chosen.map((operation) => {
  const of = (label) => perRound.filter((r) => r.operation === operation.name && r.label === label);
  const mine = of(`sandbox (${args.database})`);
  const theirs = of("Prism mock");
  return {
    operation: operation.title,
    sandbox: median(mine.map((r) => r.requestsPerSecond)),
    sandboxP99: median(mine.map((r) => r.p99)),
    prism: median(theirs.map((r) => r.requestsPerSecond)),
    prismP99: median(theirs.map((r) => r.p99)),
    cpu: median(mine.map((r) => r.serverCpuUsPerRequest ?? 0)),
    non2xx: mine.reduce((n, r) => n + r.non2xx + r.errors, 0),
  };
});
for (const s of summary) {
  console.log(
    `| ${s.operation} | ${s.sandbox.toFixed(0)} | ${s.sandboxP99} | ${s.prism.toFixed(0)} | ${s.prismP99} | ${(s.sandbox / s.prism).toFixed(2)} | ${s.cpu} |`,
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
