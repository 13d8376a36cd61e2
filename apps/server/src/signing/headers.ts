import type { Request } from "express";

/** The two headers of a signed retry, as sent (absent or empty → undefined). */
export interface WalletHeaders {
  signature?: string;
  requestId?: string;
}

export function walletHeaders(req: Request): WalletHeaders {
  const signature = req.get("Service-Wallet-Signature")?.trim();
  const requestId = req.get("Request-Id")?.trim();
  return {
    ...(signature ? { signature } : {}),
    ...(requestId ? { requestId } : {}),
  };
}

/** True when the caller sent neither header: the first leg of a signed flow. */
export function isFirstLeg(headers: WalletHeaders): boolean {
  return headers.signature === undefined && headers.requestId === undefined;
}
