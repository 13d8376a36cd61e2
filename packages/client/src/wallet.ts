// Embedded-wallet flows, one awaited call each: the requests, the keys and
// the HPKE and stamping of @payments-sandbox/crypto that a login or a signed
// action takes, in the order the API asks for them.
import {
  base64urlDecode,
  base64urlEncode,
  createStamp,
  generateP256KeyPair,
  openSessionKeyBundle,
  publicKeyFromPrivateKey,
  sealOtpBundle,
  sha256Hex,
  utf8,
  verifyOtpTargetBundle,
  type P256KeyPair,
} from "@payments-sandbox/crypto";
import type { SandboxClient, Schemas } from "./index.js";

export type AuthSession = Schemas["AuthSession"];
export type AuthMethod = Schemas["AuthMethodCreated"];
export type SignedRequestChallenge = Schemas["SignedRequestChallenge"];

/** A logged-in wallet: the session and the P-256 key that signs for it. */
export interface WalletSession {
  session: AuthSession;
  /** The session signing key. Keep `privateKeyHex` on the device; it never goes to the API. */
  signingKey: P256KeyPair;
}

/** The error body every refused request carries. */
export interface ApiErrorBody {
  status: number;
  code: string;
  message: string;
  reason?: string;
  details?: Record<string, unknown>;
}

/** The API refused a request of a wallet flow: `status`, `code` and `reason` say why. */
export class SandboxApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly reason: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  /** Seconds to wait before trying again, on 429. */
  readonly retryAfter: number | undefined;

  constructor(response: Response, body: unknown) {
    const error = asErrorBody(body, response.status);
    super(
      `${error.status} ${error.code}: ${error.message}${error.reason ? ` (${error.reason})` : ""}`,
    );
    this.name = "SandboxApiError";
    this.status = error.status;
    this.code = error.code;
    this.reason = error.reason;
    this.details = error.details;
    const retryAfter = Number(response.headers.get("Retry-After") ?? Number.NaN);
    this.retryAfter = Number.isFinite(retryAfter) ? retryAfter : undefined;
  }
}

/**
 * The API answered, but not as the flow expects at this step (a credential of
 * another type, a signed retry that asks for yet another signature, an OTP
 * bundle not signed by the published enclave key).
 */
export class WalletFlowError extends Error {
  /** The step of the flow that went wrong, e.g. `otp-challenge`. */
  readonly step: string;

  constructor(step: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "WalletFlowError";
    this.step = step;
  }
}

function asErrorBody(body: unknown, status: number): ApiErrorBody {
  const b = (typeof body === "object" && body !== null ? body : {}) as Partial<ApiErrorBody>;
  return {
    status: typeof b.status === "number" ? b.status : status,
    code: typeof b.code === "string" ? b.code : "UNEXPECTED_RESPONSE",
    message: typeof b.message === "string" ? b.message : `HTTP ${status}`,
    ...(typeof b.reason === "string" ? { reason: b.reason } : {}),
    ...(typeof b.details === "object" && b.details !== null ? { details: b.details } : {}),
  };
}

/** What every call of the typed client answers. */
export interface ApiResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of a successful call; a refused one throws SandboxApiError. */
function ok<T>(result: ApiResult<T>): T {
  if (!result.response.ok) throw new SandboxApiError(result.response, result.error);
  return result.data as T;
}

// --- Signed retries ---

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

/** A signing key: a session, its key pair, or a private key as hex. */
export type Signer = WalletSession | P256KeyPair | string;

function privateKeyOf(signer: Signer): string {
  if (typeof signer === "string") return signer;
  return "signingKey" in signer ? signer.signingKey.privateKeyHex : signer.privateKeyHex;
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

// --- OTP login ---

export interface OtpLoginOptions {
  /**
   * The code the user received, or a function that asks for it once it has
   * been sent. The sandbox sends nothing: its code is always `000000`.
   */
  code: string | (() => string | Promise<string>);
  /**
   * The platform's OTP enclave public key (uncompressed hex) that signs each
   * target bundle. Without it, it is read from `GET /sandbox/keys`.
   */
  enclavePublicKey?: string;
}

/** The first leg's result: the code is sent; seal it to `targetPublic`. */
export interface OtpChallenge {
  credentialId: string;
  type: "EMAIL_OTP" | "SMS_OTP";
  /** The uncompressed P-256 key of this code, from the checked target bundle. */
  targetPublic: string;
}

/** The sandbox's published OTP enclave key (`GET /sandbox/keys`). */
export async function otpEnclavePublicKey(api: SandboxClient): Promise<string> {
  return ok(await api.GET("/sandbox/keys")).otpEnclavePublicKey;
}

/**
 * First leg of an OTP login: asks for a code (the sandbox sends none; its
 * code is `000000`) and checks the target bundle's signature by the enclave key.
 */
export async function startOtpLogin(
  api: SandboxClient,
  credentialId: string,
  options: Pick<OtpLoginOptions, "enclavePublicKey"> = {},
): Promise<OtpChallenge> {
  const challenge = ok(
    await api.POST("/auth/credentials/{id}/challenge", {
      params: { path: { id: credentialId } },
      body: {},
    }),
  );
  if (challenge.type !== "EMAIL_OTP" && challenge.type !== "SMS_OTP") {
    throw new WalletFlowError("otp-challenge", `credential ${credentialId} is ${challenge.type}`);
  }
  if (challenge.otpEncryptionTargetBundle === undefined) {
    throw new WalletFlowError("otp-challenge", "the challenge has no otpEncryptionTargetBundle");
  }
  const enclave = options.enclavePublicKey ?? (await otpEnclavePublicKey(api));
  let targetPublic: string;
  try {
    ({ targetPublic } = verifyOtpTargetBundle(challenge.otpEncryptionTargetBundle, enclave));
  } catch (err) {
    throw new WalletFlowError(
      "otp-challenge",
      "the OTP target bundle is not signed by the enclave key",
      {
        cause: err,
      },
    );
  }
  return { credentialId, type: challenge.type, targetPublic };
}

/**
 * Second leg of an OTP login: seals `code` with a fresh key (the TEK) to the
 * challenge's target, verifies it, stamps the 202's payload with the TEK and
 * retries. The TEK is the session's signing key.
 */
export async function completeOtpLogin(
  api: SandboxClient,
  challenge: OtpChallenge,
  code: string,
): Promise<WalletSession> {
  const tek = generateP256KeyPair();
  const encryptedOtpBundle = await sealOtpBundle({
    otpCode: code,
    tekPublicKeyHex: tek.publicKeyHex,
    targetPublicKeyHex: challenge.targetPublic,
  });
  const session = await signed(
    (header) =>
      api.POST("/auth/credentials/{id}/verify", {
        params: { path: { id: challenge.credentialId }, header },
        body: { type: challenge.type, encryptedOtpBundle },
      }),
    tek,
  );
  return { session, signingKey: tek };
}

/**
 * An EMAIL_OTP or SMS_OTP login, both legs: asks for a code, seals it, and
 * answers the signed retry. `code` may be a function that prompts for it.
 */
export async function otpLogin(
  api: SandboxClient,
  credentialId: string,
  options: OtpLoginOptions,
): Promise<WalletSession> {
  const challenge = await startOtpLogin(api, credentialId, options);
  const code = typeof options.code === "string" ? options.code : await options.code();
  return completeOtpLogin(api, challenge, code);
}

// --- OAuth login ---

/**
 * The `nonce` an OIDC login token must carry to log in with `clientKey`:
 * the SHA-256 hex of its uncompressed public key. Ask the identity provider
 * for a token with this nonce, then call `oauthLogin` with the same key.
 */
export function oauthNonce(clientKey: P256KeyPair): string {
  return sha256Hex(clientKey.publicKeyUncompressedHex);
}

/** Opens a session's `encryptedSessionSigningKey` with the key it was sealed to. */
export async function openSessionSigningKey(
  session: AuthSession,
  clientKey: P256KeyPair,
): Promise<P256KeyPair> {
  if (session.encryptedSessionSigningKey === undefined) {
    throw new WalletFlowError(
      "session-key",
      `session ${session.id} has no encryptedSessionSigningKey`,
    );
  }
  const privateKeyHex = await openSessionKeyBundle(
    session.encryptedSessionSigningKey,
    clientKey.privateKeyHex,
  );
  return {
    privateKeyHex,
    publicKeyHex: publicKeyFromPrivateKey(privateKeyHex, true),
    publicKeyUncompressedHex: publicKeyFromPrivateKey(privateKeyHex, false),
  };
}

/**
 * An OAUTH login: verifies `oidcToken` (whose nonce is `oauthNonce(clientKey)`)
 * and opens the session key the API sealed to `clientKey`.
 */
export async function oauthLogin(
  api: SandboxClient,
  credentialId: string,
  options: { oidcToken: string; clientKey: P256KeyPair },
): Promise<WalletSession> {
  const session = ok(
    await api.POST("/auth/credentials/{id}/verify", {
      params: { path: { id: credentialId } },
      body: {
        type: "OAUTH",
        oidcToken: options.oidcToken,
        clientPublicKey: options.clientKey.publicKeyUncompressedHex,
      },
    }),
  ) as AuthSession;
  return { session, signingKey: await openSessionSigningKey(session, options.clientKey) };
}

// --- Passkeys ---

/** Bytes as the browser gives them, or already base64url (a credential's `toJSON()`). */
type Binary = ArrayBuffer | ArrayBufferView | string;

/**
 * What `navigator.credentials.create()` resolves to (a PublicKeyCredential),
 * or its `toJSON()`.
 */
export interface PasskeyAttestationCredential {
  id: string;
  response: {
    clientDataJSON: Binary;
    attestationObject: Binary;
    getTransports?: () => string[];
    transports?: string[];
  };
}

/** What `navigator.credentials.get()` resolves to, or its `toJSON()`. */
export interface PasskeyAssertionCredential {
  id: string;
  response: {
    clientDataJSON: Binary;
    authenticatorData: Binary;
    signature: Binary;
    userHandle?: Binary | null;
  };
}

/** Options for `navigator.credentials.get({ publicKey })` that answer a passkey login challenge. */
export interface PasskeyRequestOptions {
  challenge: Uint8Array<ArrayBuffer>;
  allowCredentials: { type: "public-key"; id: Uint8Array<ArrayBuffer> }[];
  rpId?: string;
  userVerification: "preferred";
  timeout: number;
}

/** Options for `navigator.credentials.create({ publicKey })`, and the challenge to register with. */
export interface PasskeyCreationOptions {
  challenge: Uint8Array<ArrayBuffer>;
  rp: { id?: string; name: string };
  user: { id: Uint8Array<ArrayBuffer>; name: string; displayName: string };
  pubKeyCredParams: { type: "public-key"; alg: number }[];
  authenticatorSelection: { residentKey: "preferred"; userVerification: "preferred" };
  timeout: number;
}

const PASSKEY_TRANSPORTS = ["ble", "hybrid", "internal", "nfc", "usb"] as const;
type PasskeyTransport = (typeof PASSKEY_TRANSPORTS)[number];

function base64url(value: Binary): string {
  if (typeof value === "string") return value;
  const bytes =
    value instanceof ArrayBuffer
      ? new Uint8Array(value)
      : new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  return base64urlEncode(bytes);
}

/** A copy that owns a plain ArrayBuffer, as WebAuthn's BufferSource wants. */
const ownBytes = (bytes: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array(bytes);

/**
 * Options for `navigator.credentials.create` with a fresh random challenge;
 * pass the same `challenge` (base64url) to `registerPasskey`. ES256 only, the
 * algorithm the API verifies for wallets.
 */
export function passkeyCreationOptions(params: {
  /** A name for the user, e.g. their email. */
  userName: string;
  /** The relying party's name shown by the browser. */
  rpName?: string;
  /** The relying-party id (the API's PASSKEY_RP_ID); defaults to the page's host. */
  rpId?: string;
}): { challenge: string; publicKey: PasskeyCreationOptions } {
  const challenge = ownBytes(globalThis.crypto.getRandomValues(new Uint8Array(32)));
  return {
    challenge: base64urlEncode(challenge),
    publicKey: {
      challenge,
      rp: { name: params.rpName ?? "Embedded wallet", ...(params.rpId ? { id: params.rpId } : {}) },
      user: {
        id: ownBytes(globalThis.crypto.getRandomValues(new Uint8Array(16))),
        name: params.userName,
        displayName: params.userName,
      },
      pubKeyCredParams: [{ type: "public-key", alg: -7 }],
      authenticatorSelection: { residentKey: "preferred", userVerification: "preferred" },
      timeout: 60_000,
    },
  };
}

/** The API's `attestation` from what `navigator.credentials.create()` gave. */
export function passkeyAttestation(
  credential: PasskeyAttestationCredential,
): Schemas["PasskeyAttestation"] {
  const reported = credential.response.getTransports?.() ?? credential.response.transports ?? [];
  const transports = reported.filter((t): t is PasskeyTransport =>
    (PASSKEY_TRANSPORTS as readonly string[]).includes(t),
  );
  return {
    credentialId: credential.id,
    clientDataJson: base64url(credential.response.clientDataJSON),
    attestationObject: base64url(credential.response.attestationObject),
    ...(transports.length > 0 ? { transports } : {}),
  };
}

/** The API's `assertion` from what `navigator.credentials.get()` gave. */
export function passkeyAssertion(
  credential: PasskeyAssertionCredential,
): Schemas["PasskeyAssertion"] {
  const { userHandle } = credential.response;
  const handle = userHandle === undefined || userHandle === null ? "" : base64url(userHandle);
  return {
    credentialId: credential.id,
    clientDataJson: base64url(credential.response.clientDataJSON),
    authenticatorData: base64url(credential.response.authenticatorData),
    signature: base64url(credential.response.signature),
    ...(handle !== "" ? { userHandle: handle } : {}),
  };
}

/**
 * Adds a passkey to a wallet: a signed retry stamped by an active session of
 * the same wallet. `challenge` is the base64url challenge given to
 * `navigator.credentials.create`, `credential` what it resolved to.
 */
export async function registerPasskey(
  api: SandboxClient,
  params: {
    accountId: string;
    nickname: string;
    challenge: string;
    credential: PasskeyAttestationCredential;
    signer: Signer;
  },
): Promise<AuthMethod> {
  const body = {
    type: "PASSKEY" as const,
    accountId: params.accountId,
    nickname: params.nickname,
    challenge: params.challenge,
    attestation: passkeyAttestation(params.credential),
  };
  return (await signed(
    (header) => api.POST("/auth/credentials", { params: { header }, body }),
    params.signer,
  )) as AuthMethod;
}

/**
 * A PASSKEY login: asks for a challenge bound to a fresh client key, has
 * `assert` get the assertion (in a browser,
 * `(publicKey) => navigator.credentials.get({ publicKey })`), verifies it and
 * opens the session key.
 */
export async function passkeyLogin(
  api: SandboxClient,
  credentialId: string,
  assert: (
    options: PasskeyRequestOptions,
  ) => Promise<PasskeyAssertionCredential | null> | PasskeyAssertionCredential | null,
  options: { rpId?: string } = {},
): Promise<WalletSession> {
  const clientKey = generateP256KeyPair();
  const challenge = ok(
    await api.POST("/auth/credentials/{id}/challenge", {
      params: { path: { id: credentialId } },
      body: { clientPublicKey: clientKey.publicKeyUncompressedHex },
    }),
  );
  if (challenge.type !== "PASSKEY") {
    throw new WalletFlowError(
      "passkey-challenge",
      `credential ${credentialId} is ${challenge.type}`,
    );
  }
  // The browser signs the UTF-8 bytes of the hex challenge.
  const credential = await assert({
    challenge: ownBytes(utf8(challenge.challenge)),
    allowCredentials: [
      { type: "public-key", id: ownBytes(base64urlDecode(challenge.credentialId)) },
    ],
    ...(options.rpId ? { rpId: options.rpId } : {}),
    userVerification: "preferred",
    timeout: 60_000,
  });
  if (credential === null) throw new WalletFlowError("passkey-assertion", "no assertion was made");
  const session = ok(
    await api.POST("/auth/credentials/{id}/verify", {
      params: { path: { id: credentialId }, header: { "Request-Id": challenge.requestId } },
      body: { type: "PASSKEY", assertion: passkeyAssertion(credential) },
    }),
  ) as AuthSession;
  return { session, signingKey: await openSessionSigningKey(session, clientKey) };
}

// --- Sessions ---

/** How a refreshed session's new signing key reaches the client. */
export interface RefreshSessionOptions {
  /**
   * `"client-held"` (the default, and production's recommendation): a fresh
   * key pair is made here, its compressed public key is sent, and that key
   * pair becomes the session key; the API returns no key material.
   * `"sealed"` (the legacy flow): its uncompressed public key is sent, and the
   * API makes the new key and returns it as `encryptedSessionSigningKey`,
   * sealed to it, which is opened here.
   */
  keyModel?: "client-held" | "sealed";
}

/**
 * Extends a session: a signed retry by its current key that gives the
 * session a new signing key, made and kept on this side by default (see
 * `RefreshSessionOptions`). The session keeps its id; the old key stops signing.
 */
export async function refreshSession(
  api: SandboxClient,
  wallet: WalletSession,
  options: RefreshSessionOptions = {},
): Promise<WalletSession> {
  const clientHeld = (options.keyModel ?? "client-held") === "client-held";
  const clientKey = generateP256KeyPair();
  const body = {
    clientPublicKey: clientHeld ? clientKey.publicKeyHex : clientKey.publicKeyUncompressedHex,
  };
  const session = (await signed(
    (header) =>
      api.POST("/auth/sessions/{id}/refresh", {
        params: { path: { id: wallet.session.id }, header },
        body,
      }),
    wallet,
  )) as AuthSession;
  return {
    session,
    signingKey: clientHeld ? clientKey : await openSessionSigningKey(session, clientKey),
  };
}

/** Ends a session at once (a signed retry by its own key). */
export async function logout(api: SandboxClient, wallet: WalletSession): Promise<void> {
  await signed(
    (header) =>
      api.DELETE("/auth/sessions/{id}", {
        params: { path: { id: wallet.session.id }, header },
      }),
    wallet,
  );
}

// --- Paying from the wallet ---

export type Quote = Schemas["Quote"];
export type QuoteRequest = Schemas["QuoteRequest"];

export interface WalletPaymentOptions {
  /** Sent as `Idempotency-Key` on the execution, so it can be retried safely. */
  idempotencyKey?: string;
}

/**
 * What the wallet signs to pay `quote`: the `payloadToSign` of its
 * EMBEDDED_WALLET payment instructions. A quote from any other source has
 * none (WalletFlowError `wallet-quote`).
 */
export function walletPayloadToSign(quote: Quote): string {
  for (const { accountOrWalletInfo: info } of quote.paymentInstructions ?? []) {
    if (info.accountType === "EMBEDDED_WALLET") return info.payloadToSign;
  }
  throw new WalletFlowError(
    "wallet-quote",
    `quote ${quote.id} carries no payloadToSign: its source is not an EMBEDDED_WALLET account`,
  );
}

/**
 * Executes a quote from an embedded wallet in one call: its `payloadToSign`
 * is stamped, byte for byte, with `signer` (an active session of the source
 * wallet) and sent in `Service-Wallet-Signature`. Resolves to the executed
 * quote; a refusal throws SandboxApiError (401 `WALLET_SIGNATURE_INVALID`
 * when `signer` is not an active session of that wallet).
 */
export async function executeWalletQuote(
  api: SandboxClient,
  quote: Quote,
  signer: Signer,
  options: WalletPaymentOptions = {},
): Promise<Quote> {
  const header = {
    "Service-Wallet-Signature": createStamp(walletPayloadToSign(quote), privateKeyOf(signer)),
    ...(options.idempotencyKey !== undefined ? { "Idempotency-Key": options.idempotencyKey } : {}),
  };
  return ok(
    await api.POST("/quotes/{quoteId}/execute", {
      params: { path: { quoteId: quote.id }, header },
    }),
  );
}

/**
 * Pays from an embedded wallet: creates the quote `request` describes (its
 * source the wallet), stamps the quote's `payloadToSign` with `signer` and
 * executes it, once. Resolves to the executed quote.
 *
 * ```ts
 * const paid = await payFromWallet(api, {
 *   source: { sourceType: "ACCOUNT", accountId: walletAccountId },
 *   destination: { destinationType: "ACCOUNT", accountId: bankAccountId },
 *   lockedCurrencySide: "SENDING",
 *   lockedCurrencyAmount: 1_000,
 * }, wallet);
 * ```
 */
export async function payFromWallet(
  api: SandboxClient,
  request: QuoteRequest,
  signer: Signer,
  options: WalletPaymentOptions = {},
): Promise<Quote> {
  const quote = ok(await api.POST("/quotes", { body: request }));
  return executeWalletQuote(api, quote, signer, options);
}
