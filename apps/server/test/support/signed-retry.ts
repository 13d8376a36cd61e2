// Steps the signed-retry tests share: a wallet action that answers with a
// challenge (turning privacy on), the retry that carries the stamp, and the
// 401 a refused retry gets. Each describe.each block starts its own sandbox,
// so the steps read it through a getter rather than holding one.
import { expect } from "vitest";
import type { TestSandbox } from "../harness.js";
import { createWallet, errorOf, otpLogin, type SignedChallenge, type Wallet } from "./wallet.js";

type Headers = {
  "Service-Wallet-Signature"?: string;
  "Grid-Wallet-Signature"?: string;
  "Request-Id"?: string;
};

export function signedRetrySteps(current: () => TestSandbox) {
  function setPrivacy(wallet: Wallet, privateEnabled: boolean, header: Headers = {}) {
    return current().client.PATCH("/internal-accounts/{id}", {
      params: { path: { id: wallet.accountId }, header },
      body: { privateEnabled },
    });
  }

  /** A wallet with a logged-in session, and a pending privacy challenge. */
  async function pendingPrivacy() {
    const wallet = await createWallet(current());
    const { session, key } = await otpLogin(current(), wallet.emailMethodId);
    const first = await setPrivacy(wallet, true);
    expect(first.response.status).toBe(202);
    return { wallet, session, key, challenge: first.data as SignedChallenge };
  }

  async function expect401(
    result: Promise<{ response: Response; error?: unknown }>,
    code: string,
    reason?: string,
  ) {
    const res = await result;
    expect(res.response.status).toBe(401);
    expect(errorOf(res).code).toBe(code);
    if (reason !== undefined) expect(errorOf(res).reason).toBe(reason);
  }

  return { setPrivacy, pendingPrivacy, expect401 };
}
