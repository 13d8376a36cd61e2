import { parentPort, workerData } from "node:worker_threads";
import { shareEventSequence } from "../events/outbox.js";
import { serveCalls } from "../threads.js";
import { openSqliteDriver } from "./sql.js";
import {
  COMPLETE_CHECKPOINT_EVERY,
  runProgram,
  type WriterCall,
  type WriterControl,
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

const calls = serveCalls<WriterCall, WriterControl>(
  port,
  (call) => runProgram(driver, call),
  (message) => {
    if (message.kind !== "close") return;
    void calls.drain().then(async () => {
      await driver.close();
      port.close();
    });
  },
);
