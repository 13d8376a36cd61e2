import {
  CryptoError,
  StampError,
  type ParsedStamp,
  type StampErrorKind,
} from "@payments-sandbox/crypto";
import { newOtpTarget } from "./bundles.js";
import { acceptOtpBundle } from "./otp-acceptance.js";
import { verifyStamp } from "./stamps.js";

/**
 * The crypto a request waits for but need not run on the request thread:
 * functions of their arguments alone (and, for a new key, fresh randomness),
 * called by name through runCrypto (off-thread.ts), which runs them on the
 * crypto thread (crypto-thread.ts) under load and in place otherwise.
 * Arguments and results are strings and plain objects, which cross threads
 * unchanged.
 */
export const threadOperations = {
  acceptOtpBundle,
  newOtpTarget,
  verifyStamp: (stamp: string | ParsedStamp, payload: string) => verifyStamp(stamp, payload),
};

export type ThreadOperations = typeof threadOperations;
export type ThreadOperation = keyof ThreadOperations;

export interface CryptoCall {
  op: ThreadOperation;
  args: unknown[];
}

/**
 * A call's outcome as it crosses back: its value, or the crypto error the
 * caller throws again as the same class (callers tell a rejected input from
 * a fault by it).
 */
export type CryptoOutcome =
  | { ok: true; value: unknown }
  | { ok: false; error: { name: "CryptoError"; message: string } }
  | { ok: false; error: { name: "StampError"; kind: StampErrorKind; message: string } };

/** Runs a call; errors other than the crypto ones are faults and propagate as such. */
export function runCryptoCall(call: CryptoCall): CryptoOutcome {
  const operation = threadOperations[call.op] as (...args: unknown[]) => unknown;
  try {
    return { ok: true, value: operation(...call.args) };
  } catch (err) {
    if (err instanceof StampError) {
      return { ok: false, error: { name: "StampError", kind: err.kind, message: err.message } };
    }
    if (err instanceof CryptoError) {
      return { ok: false, error: { name: "CryptoError", message: err.message } };
    }
    throw err;
  }
}

/** The value of an outcome, or its error thrown again. */
export function outcomeValue(outcome: CryptoOutcome): unknown {
  if (outcome.ok) return outcome.value;
  const { error } = outcome;
  throw error.name === "StampError"
    ? new StampError(error.kind, error.message)
    : new CryptoError(error.message);
}
