import {
  base64urlDecode,
  base64urlEncode,
  generateP256KeyPair,
  utf8,
} from "@payments-sandbox/crypto";
import type { SandboxClient, Schemas } from "../types.js";
import { ok, WalletFlowError } from "./errors.js";
import {
  openSessionSigningKey,
  type AuthSession,
  type Signer,
  type WalletSession,
} from "./keys.js";
import { signed } from "./signed-retries.js";

// Passkeys: WebAuthn options and credentials in the API's forms, adding a
// passkey to a wallet, and a PASSKEY login.

export type AuthMethod = Schemas["AuthMethodCreated"];

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
