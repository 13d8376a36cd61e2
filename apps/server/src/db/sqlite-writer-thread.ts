import { parentPort, workerData } from "node:worker_threads";
import { shareEventSequence } from "../events/outbox.js";
import { openSqliteDriver } from "./sql.js";
import { startProgram } from "./sql-programs.js";
import {
  COMPLETE_CHECKPOINT_EVERY,
  type WriterReply,
  type WriterRequest,
  type WriterThreadData,
} from "./sql-runner.js";

// The SQLite writer thread (see SqliteWriterThread in sql-runner.ts): runs
// the named programs it is sent on its own connection, committing those that
// arrive together in one write transaction, and answers each by its id.

const port = parentPort;
if (!port) throw new Error("sqlite-writer-thread runs as a worker thread");
const data = workerData as WriterThreadData;
shareEventSequence(data.eventSequence);
const driver = openSqliteDriver(data.file, {
  // 1 ms: measured (bench/RESULTS.md) to cut commits several-fold for little latency.
  gatherMs: 1,
  // The checkpoint thread started beside this one does the copying.
  completeCheckpointEvery: COMPLETE_CHECKPOINT_EVERY,
});
const inFlight = new Set<Promise<void>>();

port.on("message", (request: WriterRequest) => {
  if (request.kind === "close") {
    void Promise.allSettled([...inFlight]).then(async () => {
      await driver.close();
      port.close();
    });
    return;
  }
  const { id, name, input } = request;
  const done = driver
    .transaction(() => startProgram(name, input as never))
    .then(
      (value): WriterReply => ({ id, ok: true, value }),
      (err: unknown): WriterReply => {
        const e = err as { name?: unknown; message?: unknown; code?: unknown } | null;
        return {
          id,
          ok: false,
          error: {
            name: typeof e?.name === "string" ? e.name : "Error",
            message: typeof e?.message === "string" ? e.message : String(err),
            ...(e?.code !== undefined ? { code: e.code } : {}),
          },
        };
      },
    )
    .then((reply) => {
      port.postMessage(reply);
      inFlight.delete(done);
    });
  inFlight.add(done);
});
