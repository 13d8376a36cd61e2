import { parentPort, workerData } from "node:worker_threads";
import { serveCalls } from "../threads.js";
import { adoptSharedMemory } from "./shared-memory.js";
import { SqlProgramTable } from "./sql-programs.js";
import {
  COMPLETE_CHECKPOINT_EVERY,
  programSteps,
  type WriterCall,
  type WriterControl,
  type WriterSetup,
  type WriterThreadData,
} from "./sql-runner.js";
import { openSqliteDriver } from "./sqlite-driver.js";

// The SQLite writer thread (see SqliteWriterThread in sql-runner.ts): runs
// the programs it is sent on its own connection, committing those that
// arrive together in one write transaction, and answers each by its id.

const port = parentPort;
if (!port) throw new Error("sqlite-writer-thread runs as a worker thread");
const data = workerData as WriterThreadData;
const programs = new SqlProgramTable();

/** The shared memory first: the programs' modules take their slots as they load. */
function learn(setup: WriterSetup): void {
  adoptSharedMemory(setup.memory);
  programs.learn(setup.programs);
}

learn(data);
const driver = openSqliteDriver(data.file, {
  // 1 ms: measured (bench/RESULTS.md) to cut commits several-fold for little latency.
  gatherMs: 1,
  // The checkpoint thread started beside this one does the copying.
  completeCheckpointEvery: COMPLETE_CHECKPOINT_EVERY,
});

const calls = serveCalls<WriterCall, WriterControl>(
  port,
  (call) => {
    if (call.setup !== undefined) learn(call.setup);
    return programs.with(call.program, (program) =>
      driver.transaction(programSteps(program, call.input), undefined, call.platformId),
    );
  },
  (message) => {
    if (message.kind !== "close") return;
    void calls.drain().then(async () => {
      await driver.close();
      port.close();
    });
  },
);
