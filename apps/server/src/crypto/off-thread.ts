import { performance, type EventLoopUtilization } from "node:perf_hooks";
import { requestsInFlight } from "../requests-in-flight.js";
import { startThread, ThreadCalls } from "../threads.js";
import {
  outcomeValue,
  runCryptoCall,
  type CryptoCall,
  type CryptoOutcome,
  type ThreadOperation,
  type ThreadOperations,
} from "./thread-operations.js";

// Under load the request thread spent most of an OTP challenge, verification
// or signed retry in curve arithmetic (making the code's target, opening the
// OTP bundle, signing the verification token, verifying a stamp) and ran flat
// out while the second core sat partly idle (bench/RESULTS.md). Those calls
// can run on one thread of their own, shared by every server of the process;
// it starts with the first call.
const cryptoThread = new ThreadCalls<CryptoCall>(
  "crypto",
  () => startThread(new URL("./crypto-thread", import.meta.url), undefined),
  { idleUnref: true },
);

type Result<O extends ThreadOperation> = ReturnType<ThreadOperations[O]>;

/** Runs one of threadOperations on the crypto thread: the same result, or the same error class. */
export async function onCryptoThread<O extends ThreadOperation>(
  op: O,
  ...args: Parameters<ThreadOperations[O]>
): Promise<Result<O>> {
  const outcome = await cryptoThread.call<CryptoOutcome>({ op, args });
  return outcomeValue(outcome) as Result<O>;
}

/**
 * Whether the request thread has been busy lately: the share of the last
 * window (at least `windowMs`) its event loop spent running, above
 * `busyAbove`. Read when a call is made, so an idle server keeps no timer.
 */
export class LoopLoad {
  private sample: EventLoopUtilization;
  private busy = false;

  constructor(
    private readonly read: () => EventLoopUtilization = () => performance.eventLoopUtilization(),
    private readonly windowMs = 100,
    private readonly busyAbove = 0.7,
  ) {
    this.sample = read();
  }

  isBusy(): boolean {
    const now = this.read();
    const active = now.active - this.sample.active;
    const idle = now.idle - this.sample.idle;
    if (active + idle >= this.windowMs) {
      this.busy = active / (active + idle) > this.busyAbove;
      this.sample = now;
    }
    return this.busy;
  }
}

const requestThread = new LoopLoad();

/**
 * More requests in flight than this send calls to the crypto thread at once,
 * before the load window sees them: a burst of requests arriving together.
 */
export const THREAD_ABOVE_REQUESTS = 16;

/**
 * Whether a call made now goes to the crypto thread: when the request thread
 * is the bottleneck, busy over the last window or with a burst in flight.
 * Otherwise it runs on the request thread: a call sent to the thread costs
 * 20–60 µs more CPU (a message each way, a thread woken), which a request
 * thread with time to spare need not pay.
 */
export function cryptoThreadNow(
  inFlight = requestsInFlight(),
  busy: () => boolean = () => requestThread.isBusy(),
): boolean {
  return inFlight > THREAD_ABOVE_REQUESTS || busy();
}

/**
 * Runs one of threadOperations where it costs least for the load of the
 * moment (see cryptoThreadNow): the same result or error class either way.
 */
export async function runCrypto<O extends ThreadOperation>(
  op: O,
  ...args: Parameters<ThreadOperations[O]>
): Promise<Result<O>> {
  if (cryptoThreadNow()) return onCryptoThread(op, ...args);
  return outcomeValue(runCryptoCall({ op, args })) as Result<O>;
}
