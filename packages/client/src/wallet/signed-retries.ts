import { createStamp } from "@payments-sandbox/crypto";
import type { Schemas } from "../types.js";
import { ok, WalletFlowError, type ApiResult } from "./errors.js";
import { privateKeyOf, type Signer } from "./keys.js";

// Signed retries: a 202 asks for a stamp of its payloadToSign, and the call
// is made again with it.

export type SignedRequestChallenge = Schemas["SignedRequestChallenge"];

/** The headers of a signed retry; the first call of a signed-retry operation has neither. */
export interface SignedRetryHeaders {
  "Service-Wallet-Signature"?: string;
  "Request-Id"?: string;
}

/** A 202 that asks for a signature: the body has `payloadToSign` and `requestId`. */
export function isSignedRequestChallenge(
  response: Response,
  data: unknown,
): data is SignedRequestChallenge {
  return (
    response.status === 202 &&
    typeof data === "object" &&
    data !== null &&
    typeof (data as { payloadToSign?: unknown }).payloadToSign === "string" &&
    typeof (data as { requestId?: unknown }).requestId === "string"
  );
}

/** The headers that answer `challenge`: the stamp of its payload by `privateKeyHex`. */
export function signedRetryHeaders(
  challenge: SignedRequestChallenge,
  privateKeyHex: string,
): Required<SignedRetryHeaders> {
  return {
    "Service-Wallet-Signature": createStamp(challenge.payloadToSign, privateKeyHex),
    "Request-Id": challenge.requestId,
  };
}

/** At most this many challenges in a row: creating a delegated key takes two. */
const MAX_SIGNED_ROUNDS = 3;

/**
 * Runs a signed-retry operation as one call: `call` is made without wallet
 * headers; while the answer is a 202 challenge, its `payloadToSign` is stamped
 * with `signer` and `call` is made again with `Service-Wallet-Signature` and
 * `Request-Id`. Resolves to the data of the final answer (undefined for a
 * 204); a refusal throws SandboxApiError. `call` must send the same body each
 * time: the challenge binds it.
 *
 * ```ts
 * const account = await signed(
 *   (header) => api.PATCH("/internal-accounts/{id}", {
 *     params: { path: { id: accountId }, header },
 *     body: { privateEnabled: true },
 *   }),
 *   wallet,
 * );
 * ```
 */
export async function signed<T>(
  call: (header: SignedRetryHeaders) => Promise<ApiResult<T>>,
  signer: Signer,
): Promise<Exclude<T, SignedRequestChallenge>> {
  const privateKeyHex = privateKeyOf(signer);
  let result = await call({});
  for (let round = 0; isSignedRequestChallenge(result.response, result.data); round++) {
    if (round === MAX_SIGNED_ROUNDS) {
      throw new WalletFlowError(
        "signed-retry",
        `still asked for a signature after ${MAX_SIGNED_ROUNDS} signed retries`,
      );
    }
    result = await call(signedRetryHeaders(result.data, privateKeyHex));
  }
  return ok(result) as Exclude<T, SignedRequestChallenge>;
}
