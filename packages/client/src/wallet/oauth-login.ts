import { sha256Hex, type P256KeyPair } from "@payments-sandbox/crypto";
import type { SandboxClient } from "../types.js";
import { ok } from "./errors.js";
import { openSessionSigningKey, type AuthSession, type WalletSession } from "./keys.js";

// An OAUTH login: an OIDC token bound by its nonce to a client key, to which
// the API seals the session key.

/**
 * The `nonce` an OIDC login token must carry to log in with `clientKey`:
 * the SHA-256 hex of its uncompressed public key. Ask the identity provider
 * for a token with this nonce, then call `oauthLogin` with the same key.
 */
export function oauthNonce(clientKey: P256KeyPair): string {
  return sha256Hex(clientKey.publicKeyUncompressedHex);
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
