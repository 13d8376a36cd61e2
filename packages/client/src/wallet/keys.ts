import {
  openSessionKeyBundle,
  publicKeyFromPrivateKey,
  type P256KeyPair,
} from "@payments-sandbox/crypto";
import type { Schemas } from "../types.js";
import { WalletFlowError } from "./errors.js";

// The keys a wallet signs with: a session's own key pair, the forms a signer
// may be given in, and a session key the API sealed to the client, opened.

export type AuthSession = Schemas["AuthSession"];

/** A logged-in wallet: the session and the P-256 key that signs for it. */
export interface WalletSession {
  session: AuthSession;
  /** The session signing key. Keep `privateKeyHex` on the device; it never goes to the API. */
  signingKey: P256KeyPair;
}

/** A signing key: a session, its key pair, or a private key as hex. */
export type Signer = WalletSession | P256KeyPair | string;

/** The private key (hex) that `signer` signs with. */
export function privateKeyOf(signer: Signer): string {
  if (typeof signer === "string") return signer;
  return "signingKey" in signer ? signer.signingKey.privateKeyHex : signer.privateKeyHex;
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
