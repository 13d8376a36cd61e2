import type { Worker } from "node:worker_threads";
import { eventSequenceMemory } from "../events/outbox.js";
import { startThread } from "../threads.js";
import type { SqlDriver } from "./sql.js";
import {
  commitOf,
  startProgram,
  type SqlProgramInput,
  type SqlProgramName,
  type SqlProgramResult,
} from "./sql-programs.js";

/** Runs the named direct-SQL write transactions (sql-programs.ts). */
export interface SqlRunner {
  run<N extends SqlProgramName>(name: N, input: SqlProgramInput<N>): Promise<SqlProgramResult<N>>;
  close(): Promise<void>;
}

/** On the driver's own connection, in this thread (PostgreSQL, or SQLite without the writer thread). */
export function inlineSqlRunner(driver: SqlDriver): SqlRunner {
  return {
    run: (name, input) =>
      driver.transaction(() => startProgram(name, input), commitOf(name, input)),
    close: async () => undefined,
  };
}

/** What the writer thread answers for one request. */
export type WriterReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: { name: string; message: string; code?: unknown } };

/** What the writer thread is sent. */
export type WriterRequest =
  { kind: "run"; runs: { id: number; name: SqlProgramName; input: unknown }[] } | { kind: "close" };

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

interface Pending {
  resolve: (value: never) => void;
  reject: (error: Error) => void;
}

/**
 * SQLite write transactions on a thread of their own. A simulated card
 * authorization spends about a third of its CPU time in SQLite; on the main
 * thread that time is taken from parsing, validating and answering requests.
 * On its own thread it runs on the other core, with the same group commit
 * (db/sql.ts). The main thread keeps its connection for reads and other writes.
 */
export class SqliteWriterThread implements SqlRunner {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closing: Promise<void> | undefined;

  private checkpointer: Worker | undefined;
  private outgoing: { id: number; name: SqlProgramName; input: unknown }[] = [];

  constructor(
    private readonly file: string,
    private readonly onCheckpointError?: (err: Error) => void,
  ) {}

  run<N extends SqlProgramName>(name: N, input: SqlProgramInput<N>): Promise<SqlProgramResult<N>> {
    if (this.closing) return Promise.reject(new Error("the SQLite writer is closed"));
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise<SqlProgramResult<N>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: never) => void, reject });
      // The requests of one event-loop turn go in one message (and their
      // answers come back in one): a message costs more than its contents.
      if (this.outgoing.push({ id, name, input }) === 1) setImmediate(() => this.send(worker));
    });
  }

  private send(worker: Worker): void {
    if (this.outgoing.length === 0 || worker !== this.worker) return;
    worker.postMessage({ kind: "run", runs: this.outgoing } satisfies WriterRequest);
    this.outgoing = [];
  }

  private start(): Worker {
    const workerData: WriterThreadData = { file: this.file, eventSequence: eventSequenceMemory() };
    const worker = startThread(new URL("./sqlite-writer-thread", import.meta.url), workerData);
    this.checkpointer ??= this.startCheckpointer();
    worker.on("message", (replies: WriterReply[]) => {
      for (const reply of replies) {
        const pending = this.pending.get(reply.id);
        if (!pending) continue;
        this.pending.delete(reply.id);
        if (reply.ok) pending.resolve(reply.value as never);
        else pending.reject(Object.assign(new Error(reply.error.message), reply.error));
      }
    });
    const fail = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      // Rejected here, so never sent to a thread started after this one.
      this.outgoing = [];
      for (const pending of this.pending.values()) pending.reject(error);
      this.pending.clear();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => {
      if (this.pending.size > 0) fail(new Error(`the SQLite writer thread exited (${code})`));
      if (this.worker === worker) this.worker = undefined;
    });
    return worker;
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
      if (this.worker) this.send(this.worker);
      await Promise.all(
        [this.worker, this.checkpointer].map(async (worker) => {
          if (!worker) return;
          const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
          worker.postMessage({ kind: "close" } satisfies WriterRequest);
          await exited;
        }),
      );
    })();
    return this.closing;
  }
}
