import Database from "better-sqlite3";
import { parentPort, workerData } from "node:worker_threads";
import type { CheckpointThreadData } from "./sql-runner.js";

// Beside the SQLite writer thread: copies committed pages from the WAL into
// the database file, with their fsyncs, on a connection and a core of its
// own. A passive checkpoint never blocks the writer, nor waits for it; the
// writer completes one now and then (SqliteDriverOptions).

const port = parentPort;
if (!port) throw new Error("sqlite-checkpoint-thread runs as a worker thread");
const { file, everyMs } = workerData as CheckpointThreadData;
const db = new Database(file);
db.pragma("busy_timeout = 0");
// As the writer's connection: the WAL is synced before pages are copied out
// of it, and the database file after.
db.pragma("synchronous = NORMAL");

const timer = setInterval(() => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch (err) {
    // The writer is completing a checkpoint: this one is not needed.
    if ((err as { code?: unknown }).code !== "SQLITE_BUSY") throw err;
  }
}, everyMs);

port.on("message", (message: { kind: "close" }) => {
  if (message.kind !== "close") return;
  clearInterval(timer);
  db.close();
  port.close();
});
