import { generateP256KeyPair } from "@payments-sandbox/crypto";
import type { SandboxClient } from "../types.js";
import { openSessionSigningKey, type AuthSession, type WalletSession } from "./keys.js";
import { signed } from "./signed-retries.js";

// A logged-in session: refreshed with a new signing key, or ended.

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
