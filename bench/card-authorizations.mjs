#!/usr/bin/env node
// Simulated card authorizations per second, and p99 latency, at 50
// connections: the sandbox server against a stateless Prism mock serving the
// same operation from openapi.yaml, measured in the same run.
//
//   npm run build                      (the server runs from apps/server/dist)
//   node bench/card-authorizations.mjs [--rounds 4] [--duration 10] [--warmup 5]
//        [--connections 50] [--database sqlite|postgresql] [--validate-responses]
//        [--no-prism] [--trace latency-by-second.tsv] [--webhooks [--drain 60]]
//
// Both servers run as their own processes, side by side; the load goes to one
// at a time, in rounds that alternate between them (sandbox first in odd
// rounds, Prism first in even ones), so that both are measured under the
// same conditions on a machine whose speed varies (shared virtual CPUs). The
// summary is the median round of each. Each round also records the share of
// CPU time the hypervisor took away (steal, from /proc/stat).
//
// The sandbox runs on a fresh database, with LOG_LEVEL=warn and response
// validation off unless --validate-responses is given. Every measured request
// is a real authorization: a guarded debit of the funding source, the card
// transaction, its pull and its outbox event. Afterwards the script checks
// that the balance fell by exactly the approved amount.
//
// With --webhooks the sandbox's platform has a webhook URL on a local
// receiver (on a thread of this process) that answers 200 at once. After the load the
// script waits until no event is pending (at most --drain seconds), then
// reports whether every event in the database was delivered, duplicates, and
// the time from each event (its envelope's timestamp) to its arrival.
import { appendFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import autocannon from "autocannon";
import Database from "better-sqlite3";
import { measureRound, median, startPrism, startSandbox } from "./processes.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "4" },
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "5" },
    connections: { type: "string", default: "50" },
    database: { type: "string", default: "sqlite" },
    "validate-responses": { type: "boolean", default: false },
    "no-prism": { type: "boolean", default: false },
    // Latency second by second, to tell a steady tail from stalls.
    trace: { type: "string" },
    // Deliver every event to a local receiver while the load runs, as a
    // partner with a webhook endpoint would have it.
    webhooks: { type: "boolean", default: false },
    // With --webhooks: how long to wait after the load for the last deliveries.
    drain: { type: "string", default: "60" },
    "postgres-url": { type: "string", default: "postgresql://postgres@127.0.0.1:5432/test" },
  },
});
const rounds = Number(args.rounds);
const duration = Number(args.duration);
const warmup = Number(args.warmup);
const connections = Number(args.connections);
const AMOUNT = 100;
const purchase = JSON.stringify({
  amount: AMOUNT,
  currency: { code: "USD" },
  merchant: { descriptor: "BENCH COFFEE", mcc: "5814", country: "US" },
});

/** One measured round of load against one target (see --trace). */
async function measure(target) {
  const seconds = new Map();
  const result = await measureRound(
    target,
    duration,
    args.trace &&
      ((_client, _status, _bytes, ms) => {
        const second = Math.floor(Date.now() / 1000);
        let list = seconds.get(second);
        if (!list) seconds.set(second, (list = []));
        list.push(ms);
      }),
  );
  if (args.trace) {
    const lines = [...seconds].map(([second, list]) => {
      const sorted = list.sort((a, b) => a - b);
      const at = (q) =>
        sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1);
      return `${target.label}\t${second}\t${sorted.length}\tp50 ${at(0.5)}\tp99 ${at(0.99)}\tmax ${at(1)}`;
    });
    appendFileSync(args.trace, `${lines.join("\n")}\n`);
  }
  return result;
}

function targetOf(label, url, headers, pid) {
  return { label, pid, request: { url, connections, method: "POST", headers, body: purchase } };
}

async function startSandboxTarget() {
  const server = await startSandbox(root, {
    database: args.database,
    postgresUrl: args["postgres-url"],
    validateResponses: args["validate-responses"],
  });
  const { base, headers, call } = server;
  let receiver;
  const cleanUp = async () => {
    await server.stop();
    await receiver?.close();
  };
  try {
    if (args.webhooks) {
      receiver = await startWebhookReceiver();
      await call("PATCH", "/config", { webhookEndpoint: receiver.url });
    }
    const customer = await call("POST", "/customers", {
      customerType: "INDIVIDUAL",
      fullName: "Bench Mark",
      email: "bench@example.com",
    });
    // The customer's USD account was opened with it.
    const accountOf = async () =>
      (await call("GET", `/customers/internal-accounts?customerId=${customer.id}&currency=USD`))
        .data[0];
    const account = await accountOf();
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

    const target = targetOf(
      `sandbox (${args.database}, response validation ${args["validate-responses"] ? "on" : "off"}${args.webhooks ? ", webhooks delivered" : ""})`,
      `${base}/sandbox/cards/${card.id}/simulate/authorization`,
      headers,
      server.pid,
    );
    // Every approved authorization is in the ledger, and nothing else is.
    // autocannon counts the answers it received before each phase ended; up
    // to one request per connection was still in flight then, and was
    // authorized all the same.
    const balanceCheck = async (served, phases) => {
      const after = await accountOf();
      const approvedTotal = funds - after.balance.amount;
      const approved = approvedTotal / AMOUNT;
      if (approved < served || approved > served + phases * connections) {
        throw new Error(
          `balance fell by ${approvedTotal} (${approved} authorizations) but ${served} were answered 201`,
        );
      }
      return `balance fell by ${approvedTotal} = ${approved} authorizations of ${AMOUNT}: the ${served} answered 201 and ${approved - served} still in flight when a load phase ended (warm-up included)`;
    };
    return {
      target,
      balanceCheck,
      stop: cleanUp,
      webhooks: receiver && {
        stats: () => receiver.stats(),
        events: () => eventCounts(server.databaseUrl, server.schema),
      },
    };
  } catch (err) {
    await cleanUp();
    throw err;
  }
}
/**
 * A webhook endpoint that answers 200 at once. It records each event's id and
 * the time from the event (its envelope's `timestamp`: the sandbox clock,
 * which is the server's own here) to the delivery's arrival.
 */
// The receiver's own event loop, as a partner's receiver is its own
// process: in autocannon's loop, each answer would wait behind the load
// generator's work, and an object's events, sent one after another, with it.
const RECEIVER_THREAD = `
const { createServer } = require("node:http");
const { parentPort } = require("node:worker_threads");
const latencies = [];
const seen = new Set();
let received = 0;
let duplicates = 0;
let lastArrival = 0;
const server = createServer((req, res) => {
  const chunks = [];
  req.on("data", (chunk) => chunks.push(chunk));
  req.on("end", () => {
    const arrivedAt = Date.now();
    received++;
    lastArrival = arrivedAt;
    const { id, timestamp } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    if (seen.has(id)) duplicates++;
    else {
      seen.add(id);
      latencies.push(arrivedAt - Date.parse(timestamp));
    }
    res.writeHead(200).end();
  });
});
server.listen(0, "127.0.0.1", () => parentPort.postMessage({ port: server.address().port }));
parentPort.on("message", (message) => {
  if (message === "stats") {
    parentPort.postMessage({ received, distinct: seen.size, duplicates, lastArrival, latencies });
  } else if (message === "close") {
    server.close(() => process.exit(0));
  }
});
`;

/** A receiver on a thread of its own that answers 200 at once and keeps what it got. */
async function startWebhookReceiver() {
  const thread = new Worker(RECEIVER_THREAD, { eval: true });
  const next = () => new Promise((resolve) => thread.once("message", resolve));
  const { port } = await next();
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    stats: () => {
      const answer = next();
      thread.postMessage("stats");
      return answer;
    },
    close: () => {
      const exited = new Promise((resolve) => thread.once("exit", resolve));
      thread.postMessage("close");
      return exited;
    },
  };
}

/** Webhook events in the sandbox's database, by delivery status. */
async function eventCounts(databaseUrl, schema) {
  const rows =
    args.database === "postgresql"
      ? await (async () => {
          const pg = (await import("pg")).default;
          const client = new pg.Client({ connectionString: args["postgres-url"] });
          await client.connect();
          try {
            const r = await client.query(
              `SELECT status, COUNT(*)::int AS n FROM "${schema}"."WebhookEvent" GROUP BY status`,
            );
            return r.rows;
          } finally {
            await client.end();
          }
        })()
      : (() => {
          const db = new Database(databaseUrl.slice("file:".length), { readonly: true });
          try {
            return db
              .prepare(`SELECT status, COUNT(*) AS n FROM "WebhookEvent" GROUP BY status`)
              .all();
          } finally {
            db.close();
          }
        })();
  const counts = { PENDING: 0, DELIVERED: 0, FAILED: 0 };
  for (const { status, n } of rows) counts[status] = Number(n);
  return { ...counts, total: counts.PENDING + counts.DELIVERED + counts.FAILED };
}

async function startPrismTarget() {
  const prism = await startPrism(root);
  const target = targetOf(
    "Prism mock (stateless, static example)",
    `${prism.base}/sandbox/cards/Card:8bd59cec-f1bf-4f0a-a8d5-0d98de31f449/simulate/authorization`,
    { authorization: "Basic YTpi", "content-type": "application/json" },
    prism.pid,
  );
  return { target, stop: prism.stop };
}

/**
 * After the load: waits (up to --drain seconds) until no event is pending,
 * then compares the database's events with what the receiver got.
 */
async function drainWebhooks(webhooks) {
  const loadEnded = Date.now();
  const deadline = loadEnded + Number(args.drain) * 1000;
  let events = await webhooks.events();
  while (events.PENDING > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    events = await webhooks.events();
  }
  const stats = await webhooks.stats();
  const sorted = [...stats.latencies].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return {
    events,
    received: stats.received,
    distinct: stats.distinct,
    duplicates: stats.duplicates,
    everyEventDelivered:
      events.PENDING === 0 && events.FAILED === 0 && stats.distinct === events.total,
    lastDeliveryAfterLoadMs: Math.max(0, stats.lastArrival - loadEnded),
    latencyMs: sorted.length === 0 ? undefined : { p50: at(0.5), p99: at(0.99), max: at(1) },
  };
}

const sandbox = await startSandboxTarget();
const prism = args["no-prism"]
  ? undefined
  : await startPrismTarget().catch(async (err) => {
      await sandbox.stop();
      throw err;
    });
const targets = [sandbox.target, ...(prism ? [prism.target] : [])];
const perRound = [];
let served = 0;
try {
  for (const target of targets) {
    const w = await autocannon({ ...target.request, duration: warmup });
    if (target === sandbox.target) served += w["2xx"];
  }
  for (let round = 1; round <= rounds; round++) {
    const order = round % 2 === 1 ? targets : [...targets].reverse();
    for (const target of order) {
      const result = await measure(target);
      if (target === sandbox.target) served += result.ok;
      perRound.push({ round, ...result });
    }
  }
  sandbox.balance = await sandbox.balanceCheck(served, rounds + 1);
  if (sandbox.webhooks) sandbox.delivery = await drainWebhooks(sandbox.webhooks);
} finally {
  await prism?.stop();
  await sandbox.stop();
}

console.log(
  `\n${cpus().length} × ${cpus()[0]?.model ?? "CPU"}, Node ${process.version}, ${connections} connections, ${rounds} rounds of ${duration} s per target (after ${warmup} s warm-up each)\n`,
);
console.log(
  "| Round | Target | Requests/s (mean) | p50 ms | p99 ms | max ms | 2xx | non-2xx | errors | server CPU µs/request | CPU steal % | load avg before |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|---|---|");
for (const r of perRound) {
  console.log(
    `| ${r.round} | ${r.label} | ${r.requestsPerSecond.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.max} | ${r.ok} | ${r.non2xx} | ${r.errors} | ${r.serverCpuUsPerRequest ?? "n/a"} | ${r.stealPercent ?? "n/a"} | ${r.loadAverageBefore} |`,
  );
}
console.log("\nMedian of the rounds:\n");
console.log("| Target | Requests/s | p50 ms | p99 ms | server CPU µs/request |");
console.log("|---|---|---|---|---|");
const summary = targets.map((target) => {
  const mine = perRound.filter((r) => r.label === target.label);
  return {
    label: target.label,
    requestsPerSecond: median(mine.map((r) => r.requestsPerSecond)),
    p50: median(mine.map((r) => r.p50)),
    p99: median(mine.map((r) => r.p99)),
    serverCpuUsPerRequest: median(mine.map((r) => r.serverCpuUsPerRequest ?? 0)),
  };
});
for (const r of summary) {
  console.log(
    `| ${r.label} | ${r.requestsPerSecond.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.serverCpuUsPerRequest} |`,
  );
}
console.log(`\n${sandbox.target.label}: ${sandbox.balance}`);
if (sandbox.delivery) {
  const d = sandbox.delivery;
  console.log(
    `Webhooks: ${d.events.total} events in the database (${d.events.DELIVERED} DELIVERED, ${d.events.PENDING} PENDING, ${d.events.FAILED} FAILED); the receiver got ${d.distinct} distinct events in ${d.received} requests (${d.duplicates} duplicates); every event delivered: ${d.everyEventDelivered ? "yes" : "NO"}`,
  );
  if (d.latencyMs) {
    console.log(
      `Event to delivery (envelope timestamp to arrival): p50 ${d.latencyMs.p50} ms, p99 ${d.latencyMs.p99} ms, max ${d.latencyMs.max} ms; last delivery ${d.lastDeliveryAfterLoadMs} ms after the load ended`,
    );
  }
}
console.log(
  `\n${JSON.stringify({ perRound, summary, delivery: sandbox.delivery && { ...sandbox.delivery } })}`,
);
