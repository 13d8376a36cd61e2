import type { Worker } from "node:worker_threads";
import { eventSequenceMemory } from "../events/outbox.js";
import { startThread, ThreadCalls } from "../threads.js";
import type { SqlDriver, SqlProgram } from "./sql.js";
import {
  commitOf,
  startProgram,
  type SqlProgramInput,
  type SqlProgramName,
  type SqlProgramResult,
} from "./sql-programs.js";

/** Runs the named direct-SQL write transactions (sql-programs.ts). */
export interface SqlRunner {
  /** With `platformId`: made for a request of that platform (tenant.ts). */
  run<N extends SqlProgramName>(
    name: N,
    input: SqlProgramInput<N>,
    platformId?: string,
  ): Promise<SqlProgramResult<N>>;
  close(): Promise<void>;
}

/** Runs the named program on the driver, for its platform when it has one. */
export function runProgram(driver: SqlDriver, call: WriterCall): Promise<unknown> {
  const { name, input, platformId } = call;
  return driver.transaction(
    () => startProgram(name, input as never) as SqlProgram<unknown>,
    commitOf(name, input as never),
    platformId,
  );
}

/** On the driver's own connection, in this thread (PostgreSQL, or SQLite without the writer thread). */
export function inlineSqlRunner(driver: SqlDriver): SqlRunner {
  return {
    run: (name, input, platformId) =>
      runProgram(driver, { name, input, platformId }) as Promise<never>,
    close: async () => undefined,
  };
}

/** A call to the writer thread: a program by name, with its input. */
export interface WriterCall {
  name: SqlProgramName;
  input: unknown;
  platformId?: string | undefined;
}

/** What the writer and checkpoint threads are told besides calls. */
export interface WriterControl {
  kind: "close";
}

export interface WriterThreadData {
  file: string;
  eventSequence: SharedArrayBuffer;
}

export interface CheckpointThreadData {
  file: string;
  /** How often it looks for committed pages to copy. */
  everyMs: number;
}

// The checkpoint thread looks every 50 ms (a few hundred pages at full load);
// the writer completes a checkpoint every 128 commits (about a second).
const CHECKPOINT_EVERY_MS = 50;
export const COMPLETE_CHECKPOINT_EVERY = 128;

/**
 * SQLite write transactions on a thread of their own. A simulated card
 * authorization spends about a third of its CPU time in SQLite; on the main
 * thread that time is taken from parsing, validating and answering requests.
 * On its own thread it runs on the other core, with the same group commit
 * (db/sql.ts). The main thread keeps its connection for reads and other writes.
 */
export class SqliteWriterThread implements SqlRunner {
  private readonly writer: ThreadCalls<WriterCall>;
  private closing: Promise<void> | undefined;
  private checkpointer: Worker | undefined;

  constructor(
    private readonly file: string,
    private readonly onCheckpointError?: (err: Error) => void,
  ) {
    this.writer = new ThreadCalls("SQLite writer", () => {
      this.checkpointer ??= this.startCheckpointer();
      const data: WriterThreadData = { file: this.file, eventSequence: eventSequenceMemory() };
      return startThread(new URL("./sqlite-writer-thread", import.meta.url), data);
    });
  }

  run<N extends SqlProgramName>(
    name: N,
    input: SqlProgramInput<N>,
    platformId?: string,
  ): Promise<SqlProgramResult<N>> {
    if (this.closing) return Promise.reject(new Error("the SQLite writer is closed"));
    return this.writer.call({ name, input, platformId });
  }

  private startCheckpointer(): Worker {
    const data: CheckpointThreadData = { file: this.file, everyMs: CHECKPOINT_EVERY_MS };
    const worker = startThread(new URL("./sqlite-checkpoint-thread", import.meta.url), data);
    // Without it the WAL only grows until the writer's next complete
    // checkpoint; nothing is lost, so a failure is reported, not fatal.
    worker.on("error", (err) => this.onCheckpointError?.(err));
    worker.on("exit", () => {
      if (this.checkpointer === worker) this.checkpointer = undefined;
    });
    return worker;
  }

  /** Lets every transaction already sent finish, then stops the threads. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      const checkpointer = this.checkpointer;
      await Promise.all([
        this.writer.close({ kind: "close" } satisfies WriterControl),
        checkpointer &&
          new Promise<void>((resolve) => {
            checkpointer.once("exit", () => resolve());
            checkpointer.postMessage({ kind: "close" } satisfies WriterControl);
          }),
      ]);
    })();
    return this.closing;
  }
}
