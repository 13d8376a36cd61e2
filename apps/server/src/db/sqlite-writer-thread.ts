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
// Answers go back in one message per turn, as requests come (sql-runner.ts).
let replies: WriterReply[] = [];

function sendReplies(): void {
  if (replies.length === 0) return;
  port!.postMessage(replies);
  replies = [];
}

function answer(reply: WriterReply): void {
  if (replies.push(reply) === 1) setImmediate(sendReplies);
}

port.on("message", (request: WriterRequest) => {
  if (request.kind === "close") {
    void Promise.allSettled([...inFlight]).then(async () => {
      sendReplies();
      await driver.close();
      port.close();
    });
    return;
  }
  for (const { id, name, input } of request.runs) {
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
        answer(reply);
        inFlight.delete(done);
      });
    inFlight.add(done);
  }
});
