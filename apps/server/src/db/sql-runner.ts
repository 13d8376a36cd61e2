import type { Worker } from "node:worker_threads";
import { startThread, ThreadCalls } from "../threads.js";
import { sharedMemoryCount, sharedMemorySlots } from "./shared-memory.js";
import type { SqlDriver, SqlProgram } from "./sql.js";
import { definedSqlPrograms, type SqlProgramRef, type SqlProgramSource } from "./sql-programs.js";

/** Runs the write transactions defined as programs (sql-programs.ts). */
export interface SqlRunner {
  /** With `platformId`: made for a request of that platform (tenant.ts). */
  run<I, R>(program: SqlProgramRef<I, R>, input: NoInfer<I>, platformId?: string): Promise<R>;
  close(): Promise<void>;
}

/** The program's steps (the driver checks its platform, when it has one). */
export function programSteps<I, R>(program: SqlProgramRef<I, R>, input: I): () => SqlProgram<R> {
  return () => program.steps(input);
}

/** On the driver's own connection, in this thread (PostgreSQL, or SQLite without the writer thread). */
export function inlineSqlRunner(driver: SqlDriver): SqlRunner {
  return {
    run: (program, input, platformId) =>
      driver.transaction(programSteps(program, input), program.commit(input), platformId),
    close: async () => undefined,
  };
}

/** What a writer thread is told of the process: the programs and the shared memory. */
export interface WriterSetup {
  programs: SqlProgramSource[];
  memory: Record<string, SharedArrayBuffer>;
}

/** A call to the writer thread: a program by its id, with its input. */
export interface WriterCall {
  program: number;
  input: unknown;
  platformId?: string | undefined;
  /** Programs or shared memory that the thread may not know yet, when there are any. */
  setup?: WriterSetup;
}

/** What the writer and checkpoint threads are told besides calls. */
export interface WriterControl {
  kind: "close";
}

export interface WriterThreadData extends WriterSetup {
  file: string;
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
 * (sqlite-driver.ts). The main thread keeps its connection for reads and other writes.
 */
export class SqliteWriterThread implements SqlRunner {
  private readonly writer: ThreadCalls<WriterCall>;
  private closing: Promise<void> | undefined;
  private checkpointer: Worker | undefined;
  /** How many programs and shared memory slots the thread has been told of. */
  private told = { programs: 0, memory: 0 };

  constructor(
    private readonly file: string,
    private readonly onCheckpointError?: (err: Error) => void,
  ) {
    this.writer = new ThreadCalls("SQLite writer", () => {
      this.checkpointer ??= this.startCheckpointer();
      const data: WriterThreadData = { file: this.file, ...this.setup() };
      return startThread(new URL("./sqlite-writer-thread", import.meta.url), data);
    });
  }

  run<I, R>(program: SqlProgramRef<I, R>, input: NoInfer<I>, platformId?: string): Promise<R> {
    if (this.closing) return Promise.reject(new Error("the SQLite writer is closed"));
    const call: WriterCall = { program: program.id, input, platformId };
    // A program defined after the thread started (its module loaded late)
    // comes with its first call, before the thread imports its module.
    if (program.id >= this.told.programs || sharedMemoryCount() > this.told.memory) {
      call.setup = this.setup();
    }
    return this.writer.call(call);
  }

  /** Everything the thread must know so far; it is told once. */
  private setup(): WriterSetup {
    const setup = { programs: definedSqlPrograms(), memory: sharedMemorySlots() };
    this.told = { programs: setup.programs.length, memory: Object.keys(setup.memory).length };
    return setup;
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
