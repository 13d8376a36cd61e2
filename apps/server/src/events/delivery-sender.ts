import type { Worker } from "node:worker_threads";
import { startThread } from "../threads.js";
import type { PostResult } from "./webhook-post.js";

// Webhook requests are made on a thread of their own (delivery-thread.ts).
// On the API's thread, under load, each turn of the event loop serves many
// requests, and an object's next event could only go out a turn after the
// previous one was answered: one busy object (an account's balance events)
// was held to about a hundred events a second (bench/RESULTS.md). The
// signing and the HTTP client's work move off the API's thread too.

/** Events of one object for one URL, sent in order, each once the one before was delivered. */
export interface RunToSend {
  url: string;
  privateKeyHex: string;
  payloads: string[];
  /** No event after the first starts at or after this time (ms since the epoch). */
  startBefore: number;
  /** Keep the start of each response's body (the synchronous test webhook). */
  keepBody: boolean;
}

/** One request of a run, in order; a run's attempts end at its first failure. */
export interface SentAttempt {
  outcome: PostResult;
  latencyMs: number;
  /** Ms since the epoch. */
  startedAt: number;
  endedAt: number;
}

export interface DeliveryThreadData {
  timeoutMs: number;
}

export type DeliveryRequest =
  | { kind: "runs"; runs: { id: number; run: RunToSend }[] }
  | { kind: "interrupt" }
  | { kind: "close" };

export type DeliveryReply = { id: number; attempts: SentAttempt[] } | { id: number; error: string };

interface Pending {
  resolve: (attempts: SentAttempt[]) => void;
  reject: (error: Error) => void;
}

/** The API thread's side of the delivery thread, started with the first run. */
export class DeliverySender {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private outgoing: { id: number; run: RunToSend }[] = [];
  private interrupted = false;

  constructor(private readonly timeoutMs: number) {}

  send(run: RunToSend): Promise<SentAttempt[]> {
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // The runs of one turn go in one message: a message costs more than its contents.
      if (this.outgoing.push({ id, run }) === 1) {
        setImmediate(() => {
          if (worker !== this.worker || this.outgoing.length === 0) return;
          worker.postMessage({ kind: "runs", runs: this.outgoing } satisfies DeliveryRequest);
          this.outgoing = [];
        });
      }
    });
  }

  /** Ends the requests in flight ("interrupted") and answers every later run so at once. */
  interrupt(): void {
    this.interrupted = true;
    this.worker?.postMessage({ kind: "interrupt" } satisfies DeliveryRequest);
  }

  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
    worker.postMessage({ kind: "close" } satisfies DeliveryRequest);
    await exited;
  }

  private start(): Worker {
    const data: DeliveryThreadData = { timeoutMs: this.timeoutMs };
    const worker = startThread(new URL("./delivery-thread", import.meta.url), data);
    if (this.interrupted) worker.postMessage({ kind: "interrupt" } satisfies DeliveryRequest);
    worker.on("message", (replies: DeliveryReply[]) => {
      for (const reply of replies) {
        const pending = this.pending.get(reply.id);
        if (!pending) continue;
        this.pending.delete(reply.id);
        if ("attempts" in reply) pending.resolve(reply.attempts);
        else pending.reject(new Error(reply.error));
      }
    });
    const fail = (error: Error) => {
      if (this.worker === worker) this.worker = undefined;
      this.outgoing = [];
      for (const pending of this.pending.values()) pending.reject(error);
      this.pending.clear();
    };
    worker.on("error", fail);
    worker.on("exit", (code) => {
      if (this.pending.size > 0) fail(new Error(`the webhook delivery thread exited (${code})`));
      if (this.worker === worker) this.worker = undefined;
    });
    // The HTTP server keeps the process alive; this thread must not.
    worker.unref();
    return worker;
  }
}
