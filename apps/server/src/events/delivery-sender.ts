import { startThread, ThreadCalls } from "../threads.js";
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

/** What the delivery thread is told besides runs to send. */
export type DeliveryControl = { kind: "interrupt" } | { kind: "close" };

/** The API thread's side of the delivery thread, started with the first run. */
export class DeliverySender {
  private readonly thread: ThreadCalls<RunToSend>;
  private interrupted = false;

  constructor(timeoutMs: number) {
    this.thread = new ThreadCalls("webhook delivery", () => {
      const data: DeliveryThreadData = { timeoutMs };
      const worker = startThread(new URL("./delivery-thread", import.meta.url), data);
      if (this.interrupted) worker.postMessage({ kind: "interrupt" } satisfies DeliveryControl);
      // The HTTP server keeps the process alive; this thread must not.
      worker.unref();
      return worker;
    });
  }

  send(run: RunToSend): Promise<SentAttempt[]> {
    return this.thread.call(run);
  }

  /** Ends the requests in flight ("interrupted") and answers every later run so at once. */
  interrupt(): void {
    this.interrupted = true;
    this.thread.post({ kind: "interrupt" } satisfies DeliveryControl);
  }

  close(): Promise<void> {
    return this.thread.close({ kind: "close" } satisfies DeliveryControl);
  }
}
