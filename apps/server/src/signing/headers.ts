import { ApiError } from "../errors.js";
import type { RequestHeaders } from "../http/operation-types.js";

/** The spec's name of the wallet-signature header. */
export const WALLET_SIGNATURE = "Service-Wallet-Signature";
/** Production's name of the same header, accepted so that production code signs unchanged. */
export const WALLET_SIGNATURE_ALIAS = "Grid-Wallet-Signature";

/**
 * The wallet signature a request carries under either name (`header` reads
 * one request header). Every signed flow reads its signature through here
 * (operations.ts hands handlers the result as `Service-Wallet-Signature`).
 * Two different stamps leave no way to tell which one the caller meant.
 */
export function walletSignatureOf(
  header: (name: string) => string | undefined,
): string | undefined {
  // An empty header is no header, as for the other wallet headers.
  const spec = header(WALLET_SIGNATURE)?.trim() || undefined;
  const alias = header(WALLET_SIGNATURE_ALIAS)?.trim() || undefined;
  if (spec === undefined || alias === undefined) return spec ?? alias;
  if (spec !== alias) {
    throw new ApiError(
      401,
      "WALLET_SIGNATURE_MALFORMED",
      `${WALLET_SIGNATURE} and ${WALLET_SIGNATURE_ALIAS} differ: send the stamp in one of them`,
      {
        reason: `${WALLET_SIGNATURE} and ${WALLET_SIGNATURE_ALIAS} carry different stamps`,
      },
    );
  }
  return spec;
}

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
