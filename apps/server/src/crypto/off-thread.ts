import { startThread, ThreadCalls } from "../threads.js";
import {
  outcomeValue,
  type CryptoCall,
  type CryptoOutcome,
  type ThreadOperation,
  type ThreadOperations,
} from "./thread-operations.js";

// The request thread spent most of an OTP challenge, verification or signed
// retry in curve arithmetic (making the code's target, opening the OTP
// bundle, signing the verification token, verifying a stamp); measured, it ran at full load while the second core sat
// partly idle (bench/RESULTS.md). These calls run on one thread of their own,
// shared by every server of the process; it starts with the first call.
const cryptoThread = new ThreadCalls<CryptoCall>(
  "crypto",
  () => startThread(new URL("./crypto-thread", import.meta.url), undefined),
  { idleUnref: true },
);

/** Runs one of threadOperations on the crypto thread: the same result, or the same error class. */
export async function offThread<O extends ThreadOperation>(
  op: O,
  ...args: Parameters<ThreadOperations[O]>
): Promise<ReturnType<ThreadOperations[O]>> {
  const outcome = await cryptoThread.call<CryptoOutcome>({ op, args });
  return outcomeValue(outcome) as ReturnType<ThreadOperations[O]>;
}
