// Helpers the bench scripts share for the processes they measure.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  appendFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import autocannon from "autocannon";

/** A TCP port free on 127.0.0.1 right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * User + system CPU time (ms) in the text of a `/proc` stat file: utime and
 * stime, in ticks of 10 ms; with `reaped`, also the time of the children it
 * has waited for (cutime and cstime).
 */
function statCpuMs(stat, reaped = false) {
  const fields = stat.split(") ")[1].split(" ");
  const own = Number(fields[11]) + Number(fields[12]);
  return (reaped ? own + Number(fields[13]) + Number(fields[14]) : own) * 10;
}

/** CPU time (user + system, ms) a process has used so far; undefined off Linux. */
export function cpuMs(pid) {
  try {
    return statCpuMs(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return undefined;
  }
}

/**
 * CPU time (ms) used so far by each thread of a process, keyed by thread id
 * (the main thread's id is the process id); empty off Linux.
 */
export function threadCpuMs(pid) {
  const byThread = new Map();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      byThread.set(Number(tid), statCpuMs(readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8")));
    }
  } catch {
    // the process or a thread ended while it was read
  }
  return byThread;
}

/**
 * CPU time (ms) used so far by every PostgreSQL server process on this
 * machine (the backends serving the sandbox's connections do its queries'
 * work); 0 where there is none or off Linux. A backend that ends (its
 * connection closed between rounds) leaves its time in the postmaster's
 * count of reaped children, so the total never goes back.
 */
export function postgresCpuMs() {
  let total = 0;
  let pids = [];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return 0;
  }
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (!stat.includes(" (postgres) ")) continue;
      total += statCpuMs(stat, true);
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return total;
}

/**
 * Runs a command as a child process; `ready` resolves when its output
 * (stdout or stderr) contains `readyText`, and rejects if it exits first.
 */
export function start(cwd, command, argv, env, readyText, logFile) {
  const child = spawn(command, argv, { cwd, env: { ...process.env, ...env } });
  let output = "";
  const ready = new Promise((resolve, reject) => {
    const onData = (chunk) => {
      output += chunk;
      if (logFile) appendFileSync(logFile, chunk);
      if (output.includes(readyText)) resolve();
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.once("exit", (code) => reject(new Error(`${command} exited (${code}):\n${output}`)));
  });
  return { child, ready };
}

/** Interrupts a child process, and kills it if it has not exited 5 s later. */
export async function stop(child) {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGINT");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

/** Stolen and total CPU ticks of the whole machine so far (Linux), or undefined. */
export function machineTicks() {
  try {
    const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1);
    const ticks = cpu.map(Number);
    return { steal: ticks[7] ?? 0, total: ticks.reduce((a, b) => a + b, 0) };
  } catch {
    return undefined;
  }
}

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * Runs a batch (`{ base, connections, list, open }`, see batch-thread.mjs) on
 * a thread of its own. `ready` resolves once its connections are open, then
 * `go()` starts the batch and resolves to its answers.
 */
function runBatch({ base, connections, list, open }) {
  const worker = new Worker(new URL("./batch-thread.mjs", import.meta.url), {
    workerData: {
      base,
      connections,
      open,
      list: list.map(({ method, path, headers, body }) => ({
        method,
        path,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })),
    },
  });
  const failed = new Promise((_, reject) => {
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the batch thread exited (${code})`)));
  });
  // It also rejects when the thread is done with and ended: not a failure then.
  failed.catch(() => undefined);
  const nextMessage = () =>
    Promise.race([new Promise((resolve) => worker.once("message", resolve)), failed]);
  return {
    ready: nextMessage(),
    go: async () => {
      const done = nextMessage();
      worker.postMessage("go");
      const result = await done;
      await worker.terminate();
      return result;
    },
  };
}

/** The value at fraction `p` of sorted `values` (nearest rank). */
export const percentile = (sorted, p) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? 0;

/**
 * The batch's answers: counts, latency percentiles and throughput, with
 * each answer's [ms since the start, latency] and its start on the
 * monotonic clock. `onAnswer` sees each status and body.
 */
async function batchLoad(batchRun, onAnswer) {
  const run = await batchRun.go();
  const counts = { ok: 0, non2xx: 0, errors: 0 };
  const latencies = [];
  const answers = [];
  for (const [sinceStartMs, latencyMs, status, body] of run.answers) {
    if (status === 0) {
      counts.errors++;
      continue;
    }
    if (status >= 200 && status < 300) counts.ok++;
    else counts.non2xx++;
    latencies.push(latencyMs);
    answers.push([Math.round(sinceStartMs), latencyMs]);
    onAnswer?.(status, body);
  }
  latencies.sort((a, b) => a - b);
  const served = counts.ok + counts.non2xx;
  return {
    ...counts,
    served,
    requestsPerSecond: (served * 1000) / run.elapsedMs,
    p50: Math.round(percentile(latencies, 0.5)),
    p99: Math.round(percentile(latencies, 0.99)),
    max: Math.round(latencies.at(-1) ?? 0),
    startedMonotonicUs: run.startedMonotonicUs,
    answers,
  };
}

/** autocannon load for `duration` seconds, in the same shape as batchLoad's. */
async function timedLoad(request, duration, onResponse) {
  const started = performance.now();
  const startedMonotonicUs = Number(process.hrtime.bigint() / 1000n);
  // Kept only for BENCH_ANSWERS_DIR: a timed round has tens of thousands.
  const answers = process.env.BENCH_ANSWERS_DIR ? [] : undefined;
  const run = autocannon({ ...request, duration });
  if (answers) {
    run.on("response", (_client, _status, _bytes, latencyMs) =>
      answers.push([Math.round(performance.now() - started), latencyMs]),
    );
  }
  if (onResponse) run.on("response", onResponse);
  const r = await run;
  return {
    ok: r["2xx"],
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
    served: r["2xx"] + r.non2xx,
    requestsPerSecond: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    max: r.latency.max,
    startedMonotonicUs,
    answers,
  };
}

/**
 * One measured round against one target ({ label, pid, request } for
 * autocannon load over `duration` seconds, or { label, pid, batch } for a
 * batch of one-time requests: { base, list, open, onAnswer }, run until all
 * are answered): throughput, latency, the target process's CPU per request,
 * PostgreSQL's CPU per request (its backends do a PostgreSQL-backed
 * sandbox's queries; the Prism rounds show what it spends on nothing) and
 * the share of CPU the hypervisor took (steal). `onResponse` sees each
 * answer of a timed round.
 */
export async function measureRound(target, duration, onResponse) {
  const batchRun = target.batch ? runBatch(target.batch) : undefined;
  await batchRun?.ready;
  const load1 = loadavg()[0];
  const cpuBefore = cpuMs(target.pid);
  const postgresBefore = postgresCpuMs();
  const ticksBefore = machineTicks();
  const result = batchRun
    ? await batchLoad(batchRun, target.batch.onAnswer)
    : await timedLoad(target.request, duration, onResponse);
  const ticksAfter = machineTicks();
  const cpuAfter = cpuMs(target.pid);
  const postgresAfter = postgresCpuMs();
  // With BENCH_ANSWERS_DIR, each answer's time since the round's start and
  // its latency (ms), to see when the slow ones came, with the round's start
  // on the clock (CLOCK_MONOTONIC, µs) of a server profile taken with
  // BENCH_SERVER_NODE_ARGS=--cpu-prof.
  if (process.env.BENCH_ANSWERS_DIR) {
    const name = `${Date.now()}-${target.label.replace(/\W+/g, "-")}.json`;
    writeFileSync(
      join(process.env.BENCH_ANSWERS_DIR, name),
      JSON.stringify({
        label: target.label,
        startedMonotonicUs: result.startedMonotonicUs,
        answers: result.answers,
      }),
    );
  }
  const { served } = result;
  return {
    label: target.label,
    requestsPerSecond: result.requestsPerSecond,
    p50: result.p50,
    p99: result.p99,
    max: result.max,
    ok: result.ok,
    non2xx: result.non2xx,
    errors: result.errors,
    serverCpuUsPerRequest:
      cpuBefore === undefined || cpuAfter === undefined || served === 0
        ? undefined
        : Math.round(((cpuAfter - cpuBefore) * 1000) / served),
    postgresCpuUsPerRequest:
      served === 0 ? undefined : Math.round(((postgresAfter - postgresBefore) * 1000) / served),
    stealPercent:
      ticksBefore && ticksAfter && ticksAfter.total > ticksBefore.total
        ? Math.round(
            (100 * (ticksAfter.steal - ticksBefore.steal)) / (ticksAfter.total - ticksBefore.total),
          )
        : undefined,
    loadAverageBefore: Number(load1.toFixed(2)),
  };
}

/**
 * A stateless Prism mock of openapi.yaml (bench/node_modules), listening on a
 * free port once this resolves: { base, pid, stop }.
 */
export async function startPrism(root) {
  const port = await freePort();
  const prism = join(root, "node_modules", ".bin", "prism");
  const { child, ready } = start(
    root,
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
  return { base: `http://127.0.0.1:${port}`, pid: child.pid, stop: () => stop(child) };
}

/**
 * A bare node:http server (bench/bare-server.mjs) as its own process,
 * answering every request with `answer` ({ status, contentType, body }, the
 * body as bytes): what Node alone serves on this machine with the sandbox's
 * very answer, the limit the sandbox is compared with. Listening on a free
 * port once this resolves, with a base URL of the sandbox's shape:
 * { base, pid, stop }.
 */
export async function startBareServer(root, answer) {
  const port = await freePort();
  // The body goes by file: a list's answer is too long for an argument.
  const dir = mkdtempSync(join(tmpdir(), "bench-bare-"));
  const bodyFile = join(dir, "body");
  writeFileSync(bodyFile, answer.body);
  const { child, ready } = start(
    root,
    process.execPath,
    [
      join(root, "bench", "bare-server.mjs"),
      String(port),
      String(answer.status),
      answer.contentType,
      bodyFile,
    ],
    {},
    "bare server listening",
  );
  const cleanUp = async () => {
    await stop(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await ready;
  } catch (err) {
    await cleanUp();
    throw err;
  }
  return { base: `http://127.0.0.1:${port}/2025-10-13`, pid: child.pid, stop: cleanUp };
}

/**
 * The built sandbox server as its own process, on a fresh database (SQLite in
 * a temporary folder, or a fresh PostgreSQL schema), at LOG_LEVEL=warn:
 * { base, headers, tokenId, secret, call, pid, databaseUrl, schema, stop }.
 */
export async function startSandbox(root, options) {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "bench-sandbox-"));
  const schema = `bench_${randomBytes(4).toString("hex")}`;
  const databaseUrl =
    options.database === "postgresql"
      ? `${options.postgresUrl}${options.postgresUrl.includes("?") ? "&" : "?"}schema=${schema}`
      : `file:${join(dir, "sandbox.db")}`;
  const tokenId = "bench-token";
  const secret = randomBytes(24).toString("base64url");
  const { child, ready } = start(
    root,
    process.execPath,
    // e.g. BENCH_SERVER_NODE_ARGS=--cpu-prof to see where the server's time goes.
    [
      ...(process.env.BENCH_SERVER_NODE_ARGS?.split(" ").filter(Boolean) ?? []),
      options.main ?? process.env.BENCH_MAIN ?? "apps/server/dist/main.js",
    ],
    {
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      SANDBOX_TOKEN_ID: tokenId,
      SANDBOX_TOKEN_SECRET: secret,
      LOG_LEVEL: "warn",
      VALIDATE_RESPONSES: String(options.validateResponses ?? false),
    },
    "Base URL",
    // e.g. BENCH_SERVER_LOG=/tmp/server.log with BENCH_SERVER_NODE_ARGS=--trace-gc.
    process.env.BENCH_SERVER_LOG,
  );
  const cleanUp = async () => {
    await stop(child);
    rmSync(dir, { recursive: true, force: true });
    if (options.database === "postgresql") {
      const pg = (await import("pg")).default;
      const client = new pg.Client({ connectionString: options.postgresUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  };
  try {
    await ready;
  } catch (err) {
    await cleanUp();
    throw err;
  }
  const base = `http://127.0.0.1:${port}/2025-10-13`;
  const headers = {
    authorization: `Basic ${Buffer.from(`${tokenId}:${secret}`).toString("base64")}`,
    "content-type": "application/json",
  };
  const call = async (method, path, body, extraHeaders = {}) => {
    const res = await fetch(base + path, {
      method,
      headers: { ...headers, ...extraHeaders },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  return {
    base,
    headers,
    tokenId,
    secret,
    call,
    pid: child.pid,
    databaseUrl,
    schema,
    stop: cleanUp,
  };
}
