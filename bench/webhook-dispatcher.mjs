#!/usr/bin/env node
// What the webhook dispatcher costs as its backlog grows: the server's CPU
// time per delivered event while it works through a backlog, and per poll
// while nothing it may deliver is waiting.
//
//   npm run build                      (the server runs from apps/server/dist)
//   node bench/webhook-dispatcher.mjs [--backlogs 0,1000,20000] [--idle 10]
//
// For each backlog size N, a fresh server on a fresh SQLite database gets,
// written straight into its outbox table:
// - N events of its own platform, due now, written before its webhook URL is
//   set (they wait as NO_ENDPOINT); then the URL is set to a local receiver
//   answering 200, and the script times their delivery ("drain");
// - N events of a platform without a URL, which stay pending throughout, as
//   a partner's events do until it sets one.
// Then, with nothing deliverable left, the server idles for --idle seconds:
// its CPU time then, less that of N = 0, over the number of polls (one per
// WEBHOOK_POLL_MS, 200 ms by default), is the cost of a poll at that backlog.
// Other WEBHOOK_* variables in the environment reach the server.
import { spawn } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createHttpServer } from "node:http";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import Database from "better-sqlite3";
import { cpuMs, freePort } from "./processes.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({
  options: {
    backlogs: { type: "string", default: "0,1000,20000" },
    idle: { type: "string", default: "10" },
    // A drain still running then is cut short: the rate so far is reported.
    "max-drain": { type: "string", default: "120" },
  },
});
// The server's default WEBHOOK_POLL_MS.
const POLL_MS = 200;
const VERSION = "/2025-10-13";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Prisma's SQLite DateTime format (db/sql.ts). */
const sqliteDate = (date) => date.toISOString().replace("Z", "+00:00");

function writeEvents(file, platformId, count) {
  const db = new Database(file);
  db.pragma("busy_timeout = 10000");
  const insert = db.prepare(
    `INSERT INTO "WebhookEvent" ("id", "platformId", "type", "objectId", "seq", "payload",
       "createdAt", "status", "attemptCount", "replayCount", "nextAttemptAt")
     VALUES (?, ?, 'CARD_TRANSACTION.AUTHORIZED', ?, ?, ?, ?, 'PENDING', 0, 0, ?)`,
  );
  const now = new Date();
  const base = BigInt(now.getTime()) * 1024n;
  const data = { merchant: { descriptor: "BENCH COFFEE", mcc: "5814" }, note: "x".repeat(600) };
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const id = `Webhook:${randomUUID()}`;
      const objectId = `CardTransaction:${randomUUID()}`;
      const payload = JSON.stringify({
        id,
        type: "CARD_TRANSACTION.AUTHORIZED",
        timestamp: now.toISOString(),
        data: { id: objectId, ...data },
      });
      const at = sqliteDate(now);
      insert.run(id, platformId, objectId, base + BigInt(i), payload, at, at);
    }
  })();
  db.close();
}

async function receiver() {
  let received = 0;
  const server = createHttpServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received++;
      res.writeHead(200).end();
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/webhooks`,
    count: () => received,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

async function measure(backlog) {
  const dir = mkdtempSync(join(tmpdir(), "bench-dispatcher-"));
  const file = join(dir, "sandbox.db");
  const port = await freePort();
  const tokenId = "bench-token";
  const secret = randomBytes(24).toString("base64url");
  const child = spawn(
    process.execPath,
    // e.g. BENCH_SERVER_NODE_ARGS=--cpu-prof to see where the server's time goes.
    [
      ...(process.env.BENCH_SERVER_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
      process.env.BENCH_MAIN ?? "apps/server/dist/main.js",
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(port),
        DATABASE_URL: `file:${file}`,
        SANDBOX_TOKEN_ID: tokenId,
        SANDBOX_TOKEN_SECRET: secret,
        LOG_LEVEL: "warn",
      },
    },
  );
  let output = "";
  await new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk;
      if (output.includes("Base URL")) resolve();
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`server exited (${code}):\n${output}`)));
  });
  const sink = await receiver();
  try {
    const headers = {
      authorization: `Basic ${Buffer.from(`${tokenId}:${secret}`).toString("base64")}`,
      "content-type": "application/json",
    };
    const platform = await (
      await fetch(`http://127.0.0.1:${port}${VERSION}/config`, { headers })
    ).json();
    writeEvents(file, platform.id, backlog);
    writeEvents(file, "Platform:bench-without-url", backlog);

    const cpuBefore = cpuMs(child.pid);
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}${VERSION}/config`, {
      method: "PATCH",
      headers,
      body: JSON.stringify({ webhookEndpoint: sink.url }),
    });
    if (!res.ok) throw new Error(`PATCH /config: ${res.status}`);
    const maxDrainMs = Number(args["max-drain"]) * 1000;
    while (sink.count() < backlog && performance.now() - started < maxDrainMs) await sleep(20);
    const drainMs = performance.now() - started;
    const drainCpu = cpuMs(child.pid) - cpuBefore;
    const drained = sink.count();
    // Cut short, the server is still busy delivering: no idle phase.
    let idleCpuMsPerSecond;
    if (drained >= backlog) {
      // Let the last bookkeeping settle, then idle.
      await sleep(1000);
      const idleSeconds = Number(args.idle);
      const idleBefore = cpuMs(child.pid);
      await sleep(idleSeconds * 1000);
      idleCpuMsPerSecond = (cpuMs(child.pid) - idleBefore) / idleSeconds;
    }
    return {
      backlog,
      delivered: drained,
      drainSeconds: drainMs / 1000,
      deliveriesPerSecond: drained === 0 ? undefined : drained / (drainMs / 1000),
      cpuUsPerDelivery: drained === 0 ? undefined : Math.round((drainCpu * 1000) / drained),
      idleCpuMsPerSecond,
    };
  } finally {
    await sink.close();
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGINT");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

const load = loadavg()[0];
const results = [];
for (const backlog of args.backlogs.split(",").map(Number)) results.push(await measure(backlog));
const floor = results.find((r) => r.backlog === 0)?.idleCpuMsPerSecond;
const pollsPerSecond = 1000 / POLL_MS;

console.log(
  `\n${cpus().length} × ${cpus()[0]?.model ?? "CPU"}, Node ${process.version}, load average ${load.toFixed(2)} before the run\n`,
);
console.log(
  "| Backlog (due + waiting) | Delivered in the drain | Drain s | Deliveries/s | Server CPU µs/delivery | Idle CPU ms/s | Per poll above N = 0, ms |",
);
console.log("|---|---|---|---|---|---|---|");
for (const r of results) {
  const perPoll =
    floor === undefined || r.idleCpuMsPerSecond === undefined
      ? "n/a"
      : ((r.idleCpuMsPerSecond - floor) / pollsPerSecond).toFixed(2);
  console.log(
    `| ${r.backlog} + ${r.backlog} | ${r.delivered} | ${r.drainSeconds.toFixed(2)} | ${r.deliveriesPerSecond?.toFixed(0) ?? "–"} | ${r.cpuUsPerDelivery ?? "–"} | ${r.idleCpuMsPerSecond?.toFixed(1) ?? "n/a (still delivering)"} | ${perPoll} |`,
  );
}
console.log(`\n${JSON.stringify(results)}`);
