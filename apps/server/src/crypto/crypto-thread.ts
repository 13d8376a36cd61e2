import { parentPort } from "node:worker_threads";
import { serveCalls } from "../threads.js";
import { runCryptoCall, type CryptoCall } from "./thread-operations.js";

// The crypto thread (see runCrypto in off-thread.ts): runs the calls it is
// sent and answers each by its id. It keeps nothing between calls but
// node:crypto's and p256-keys.ts's caches.

const port = parentPort;
if (!port) throw new Error("crypto-thread runs as a worker thread");

// Each call runs in an event-loop turn of its own, so that its answer leaves
// while the next is computed. Run together, a batch of forty calls held
// every answer for the whole batch (about 30 ms), and the request thread sat
// idle waiting for it, then the crypto thread for the next batch.
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
let previous: Promise<unknown> = Promise.resolve();

serveCalls<CryptoCall, never>(
  port,
  (call) => {
    const result = previous.then(nextTurn).then(() => runCryptoCall(call));
    previous = result.catch(() => undefined);
    return result;
  },
  () => undefined,
);
