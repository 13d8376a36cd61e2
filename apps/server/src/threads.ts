import { Worker, type MessagePort } from "node:worker_threads";

// The server's worker threads (the SQLite writer, the webhook deliveries,
// the crypto thread) are called the same way: the caller sends calls, the thread answers each
// by its id. The calls of one event-loop turn go in one message and their
// answers come back in one: a message costs more than its contents.

/**
 * A worker thread running one of the server's thread modules, given by its
 * URL without extension (e.g. `new URL("./delivery-thread", import.meta.url)`).
 */
export function startThread(module: URL, workerData: unknown): Worker {
  return import.meta.url.endsWith(".ts")
    ? // Under the test runner the modules are TypeScript source: the thread
      // loads its source through tsx's loader.
      new Worker(
        `import("tsx/esm/api").then(({ register }) => { register(); return import(${JSON.stringify(
          `${module.href}.ts`,
        )}); });`,
        { eval: true, workerData },
      )
    : new Worker(new URL(`${module.href}.js`), { workerData });
}

/** The calls of one turn, as a thread is sent them. */
export interface CallBatch<C> {
  kind: "calls";
  calls: { id: number; call: C }[];
}

type Reply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: { name: string; message: string; code?: unknown } };

interface Pending {
  resolve: (value: never) => void;
  reject: (error: Error) => void;
}

export interface ThreadCallsOptions {
  /**
   * The thread keeps the process alive only while calls are under way, so
   * it needs no closing: for a thread that holds no state of its own.
   */
  idleUnref?: boolean;
}

/**
 * The caller's side: calls to a thread started with the first of them. A
 * thread that fails or exits rejects the calls it holds; the next call starts
 * a new one.
 */
export class ThreadCalls<C> {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private outgoing: { id: number; call: C }[] = [];

  /** `name` says which thread in errors; `start` makes a new one. */
  constructor(
    private readonly name: string,
    private readonly start: () => Worker,
    private readonly options: ThreadCallsOptions = {},
  ) {}

  call<R>(call: C): Promise<R> {
    const worker = (this.worker ??= this.watch(this.start()));
    const id = this.nextId++;
    return new Promise<R>((resolve, reject) => {
      if (this.pending.size === 0 && this.options.idleUnref) worker.ref();
      this.pending.set(id, { resolve: resolve as (value: never) => void, reject });
      if (this.outgoing.push({ id, call }) === 1) setImmediate(() => this.send(worker));
    });
  }

  /** A message of the thread's own (not a call) to the running thread, after the calls made so far. */
  post(message: unknown): void {
    if (!this.worker) return;
    this.send(this.worker);
    this.worker.postMessage(message);
  }

  /** Sends the calls made so far and `message`, then waits for the thread to exit. */
  async close(message: unknown): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    this.post(message);
    await exited;
  }

  private send(worker: Worker): void {
    if (this.outgoing.length === 0 || worker !== this.worker) return;
    worker.postMessage({ kind: "calls", calls: this.outgoing } satisfies CallBatch<C>);
    this.outgoing = [];
  }

  private watch(worker: Worker): Worker {
    if (this.options.idleUnref) worker.unref();
    worker.on("message", (replies: Reply[]) => {
      for (const reply of replies) {
        const pending = this.pending.get(reply.id);
        if (!pending) continue;
        this.pending.delete(reply.id);
        if (reply.ok) pending.resolve(reply.value as never);
        else pending.reject(Object.assign(new Error(reply.error.message), reply.error));
      }
      if (this.pending.size === 0 && this.options.idleUnref) worker.unref();
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
      if (this.pending.size > 0) fail(new Error(`the ${this.name} thread exited (${code})`));
      if (this.worker === worker) this.worker = undefined;
    });
    return worker;
  }
}

/**
 * The thread's side: answers each call with what `handle` resolves to (or
 * its error), and passes any other message to `control`. `drain` waits for
 * the calls under way and sends their answers.
 */
export function serveCalls<C, M>(
  port: MessagePort,
  handle: (call: C) => Promise<unknown>,
  control: (message: M) => void,
): { drain: () => Promise<void> } {
  const inFlight = new Set<Promise<void>>();
  let replies: Reply[] = [];
  const flush = () => {
    if (replies.length === 0) return;
    port.postMessage(replies);
    replies = [];
  };
  const answer = (reply: Reply) => {
    if (replies.push(reply) === 1) setImmediate(flush);
  };
  port.on("message", (message: CallBatch<C> | M) => {
    if ((message as { kind?: unknown }).kind !== "calls") {
      control(message as M);
      return;
    }
    for (const { id, call } of (message as CallBatch<C>).calls) {
      const done = handle(call)
        .then(
          (value): Reply => ({ id, ok: true, value }),
          (err: unknown): Reply => {
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
  return {
    drain: async () => {
      await Promise.allSettled([...inFlight]);
      flush();
    },
  };
}
