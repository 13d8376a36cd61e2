import createFetchClient, { type ClientOptions } from "openapi-fetch";
import type { paths, SandboxClient } from "./types.js";

export type { components, operations, paths, webhooks, Schemas, SandboxClient } from "./types.js";

export interface CreateClientOptions {
  /** The base URL including the version segment, e.g. http://localhost:3000/2025-10-13 */
  baseUrl: string;
  /** API token id (the Basic auth user name). */
  tokenId: string;
  /** API client secret (the Basic auth password). */
  secret: string;
  /** Extra openapi-fetch options (custom fetch, headers). */
  options?: Omit<ClientOptions, "baseUrl">;
}

function basicAuthorization(tokenId: string, secret: string): string {
  const bytes = new TextEncoder().encode(`${tokenId}:${secret}`);
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return `Basic ${btoa(binary)}`;
}

/** A typed client of the API at `baseUrl`, sending `authorization` (when given) on every request. */
function clientFor(
  baseUrl: string,
  options: Omit<ClientOptions, "baseUrl"> | undefined,
  authorization: string | undefined,
): SandboxClient {
  return createFetchClient<paths>({
    ...options,
    baseUrl: baseUrl.replace(/\/+$/, ""),
    headers: {
      ...(options?.headers as Record<string, string> | undefined),
      ...(authorization !== undefined ? { Authorization: authorization } : {}),
    },
  });
}

/** A typed client for the sandbox API, authenticated with BasicAuth. */
export function createClient({
  baseUrl,
  tokenId,
  secret,
  options,
}: CreateClientOptions): SandboxClient {
  return clientFor(baseUrl, options, basicAuthorization(tokenId, secret));
}

export interface CreateAgentClientOptions {
  /** The base URL including the version segment, e.g. http://localhost:3000/2025-10-13 */
  baseUrl: string;
  /**
   * The agent's `accessToken` from `POST /agents/device-codes/{code}/redeem`
   * (AgentAuth). Without one the client sends no credentials, which is what
   * redeeming the device code needs.
   */
  accessToken?: string;
  /** Extra openapi-fetch options (custom fetch, headers). */
  options?: Omit<ClientOptions, "baseUrl">;
}

/** A typed client for agent software: AgentAuth, or no credentials before it has its token. */
export function createAgentClient({
  baseUrl,
  accessToken,
  options,
}: CreateAgentClientOptions): SandboxClient {
  return clientFor(
    baseUrl,
    options,
    accessToken !== undefined ? `Bearer ${accessToken}` : undefined,
  );
}

export {
  isCardDecline,
  type CardAuthorizationResult,
  type CardDecline,
} from "./card-simulations.js";

export {
  LEGACY_WEBHOOK_SIGNATURE_HEADER,
  WEBHOOK_SIGNATURE_HEADER,
  verifyWebhook,
  webhookSignatureOf,
  type WebhookEnvelope,
  type WebhookHeaders,
} from "./webhooks.js";

export {
  SandboxApiError,
  WalletFlowError,
  completeOtpLogin,
  executeWalletQuote,
  isSignedRequestChallenge,
  logout,
  oauthLogin,
  oauthNonce,
  openSessionSigningKey,
  otpEnclavePublicKey,
  otpLogin,
  passkeyAssertion,
  passkeyAttestation,
  passkeyCreationOptions,
  passkeyLogin,
  payFromWallet,
  refreshSession,
  registerPasskey,
  signed,
  signedRetryHeaders,
  startOtpLogin,
  walletPayloadToSign,
} from "./wallet.js";
export type {
  ApiErrorBody,
  ApiResult,
  AuthMethod,
  AuthSession,
  OtpChallenge,
  OtpLoginOptions,
  PasskeyAssertionCredential,
  PasskeyAttestationCredential,
  PasskeyCreationOptions,
  PasskeyRequestOptions,
  Quote,
  QuoteRequest,
  RefreshSessionOptions,
  SignedRequestChallenge,
  SignedRetryHeaders,
  Signer,
  WalletPaymentOptions,
  WalletSession,
} from "./wallet.js";
// The key helpers a wallet app needs, so one package is enough to log in and sign.
export { generateP256KeyPair, type P256KeyPair } from "@payments-sandbox/crypto";
