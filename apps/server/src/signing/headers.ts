import type { RequestHeaders } from "../http/operation-types.js";

/** The two headers of a signed retry, as sent (absent or empty → undefined). */
export interface WalletHeaders {
  signature?: string;
  requestId?: string;
}

/** The signed-retry headers as the signed operations declare them in openapi.yaml. */
export type SignedRetryHeaders = Pick<
  RequestHeaders<"revokeAuthSession">,
  "Service-Wallet-Signature" | "Request-Id"
>;

export function walletHeaders(headers: SignedRetryHeaders): WalletHeaders {
  const signature = headers["Service-Wallet-Signature"]?.trim();
  const requestId = headers["Request-Id"]?.trim();
  return {
    ...(signature ? { signature } : {}),
    ...(requestId ? { requestId } : {}),
  };
}

/** True when the caller sent neither header: the first leg of a signed flow. */
export function isFirstLeg(headers: WalletHeaders): boolean {
  return headers.signature === undefined && headers.requestId === undefined;
}
