// A batch of one-time requests, sent from a thread of its own (see
// runBatch in processes.mjs): this thread's heap holds only the batch, so
// its garbage collections stay short, and the bench's main thread, whose
// heap holds thousands of sealed requests and keys, sits idle while it runs.
//
// workerData: { base, connections, open, list } where `open` and each item
// of `list` are { method, path, headers, body? } (body already a string).
// Messages out: "open" once every connection is open, then, after "go"
// comes in, { startedMonotonicUs, elapsedMs, answers } where each answer is
// [msSinceStart, latencyMs, status, body] or [msSinceStart, latencyMs, 0,
// errorMessage] for a request that failed.
import { parentPort, workerData } from "node:worker_threads";
import { Client } from "undici";

const { base, connections, open, list } = workerData;
const url = new URL(base);
const prefix = url.pathname.replace(/\/$/, "");

// Each connection is opened with one unmeasured request, so that the batch
// runs on connections the server has accepted, as a client that keeps its
// connections does. A batch opened on fresh connections timed their
// accepting too: Node (libuv 1.45 and later) accepts one connection per
// event-loop turn, and a loaded server's turn lasts milliseconds, so a
// batch's first requests waited up to 145 ms to be read (bench/RESULTS.md).
// A request's latency here runs from its sending on an open connection to
// its answer, as wrk and k6 take it.
const clients = Array.from(
  { length: Math.min(connections, list.length) },
  () => new Client(url.origin, { pipelining: 1 }),
);
await Promise.all(
  clients.map(async (client) => {
    const res = await client.request({ ...open, path: prefix + open.path });
    await res.body.dump();
    if (res.statusCode >= 300) {
      throw new Error(`opening a connection: ${open.method} ${open.path}: ${res.statusCode}`);
    }
  }),
);
parentPort.postMessage("open");
await new Promise((resolve) => parentPort.once("message", resolve));

const answers = [];
const started = performance.now();
const startedMonotonicUs = Number(process.hrtime.bigint() / 1000n);
let next = 0;
await Promise.all(
  clients.map(async (client) => {
    while (next < list.length) {
      const item = list[next++];
      const request = { ...item, path: prefix + item.path };
      const sent = performance.now();
      try {
        const res = await client.request(request);
        const body = await res.body.text();
        const now = performance.now();
        answers.push([now - started, now - sent, res.statusCode, body]);
      } catch (err) {
        const now = performance.now();
        answers.push([now - started, now - sent, 0, String(err)]);
      }
    }
  }),
);
const elapsedMs = performance.now() - started;
await Promise.all(clients.map((client) => client.close()));
parentPort.postMessage({ startedMonotonicUs, elapsedMs, answers });
