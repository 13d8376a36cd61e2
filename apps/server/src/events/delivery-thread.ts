import { performance } from "node:perf_hooks";
import { parentPort, workerData } from "node:worker_threads";
import { serveCalls } from "../threads.js";
import type {
  DeliveryControl,
  DeliveryThreadData,
  RunToSend,
  SentAttempt,
} from "./delivery-sender.js";
import { WebhookPoster } from "./webhook-post.js";
import { webhookSignature } from "./webhook-signer.js";

// The webhook delivery thread (see DeliverySender in delivery-sender.ts):
// signs and POSTs the runs of events it is given, each run in order, and
// answers each run with its attempts. Its event loop serves only these
// requests, so the next event of a run goes out as soon as the receiver has
// answered the one before, however loaded the API's thread is.

const port = parentPort;
if (!port) throw new Error("delivery-thread runs as a worker thread");
const { timeoutMs } = workerData as DeliveryThreadData;
const poster = new WebhookPoster(timeoutMs);

async function sendRun(run: RunToSend): Promise<SentAttempt[]> {
  const attempts: SentAttempt[] = [];
  for (const [i, payload] of run.payloads.entries()) {
    if (i > 0 && Date.now() >= run.startBefore) break;
    const startedAt = Date.now();
    const started = performance.now();
    const signature = webhookSignature(payload, run.privateKeyHex);
    const outcome = await poster.post(
      run.url,
      payload,
      {
        "Content-Type": "application/json",
        // Production's header, and the sandbox's old name for it, so that
        // receivers written against the old name keep verifying.
        "X-Grid-Signature": signature,
        "X-Service-Signature": signature,
        "User-Agent": "payments-sandbox-webhooks/1",
      },
      run.keepBody,
    );
    attempts.push({
      outcome,
      latencyMs: Math.max(0, Math.round(performance.now() - started)),
      startedAt,
      endedAt: Date.now(),
    });
    // The next event of the object waits until this one is delivered.
    if (outcome.kind !== "response" || outcome.httpStatus < 200 || outcome.httpStatus >= 300) {
      break;
    }
  }
  return attempts;
}

serveCalls<RunToSend, DeliveryControl>(port, sendRun, (message) => {
  if (message.kind === "interrupt") {
    poster.interrupt();
  } else {
    poster.close();
    port.close();
  }
});
