import type { Handlers } from "../../http/operations.js";
import { walletHeaders } from "../../signing/headers.js";
import type { CredentialService } from "./credentials.js";
import type { DelegatedKeyService } from "./delegated-keys.js";
import type { LoginService } from "./login.js";
import type { SessionService } from "./sessions.js";

export function authRoutes(
  credentials: CredentialService,
  login: LoginService,
  sessions: SessionService,
  delegatedKeys: DelegatedKeyService,
): Handlers<
  | "createAuthCredential"
  | "listAuthCredentials"
  | "revokeAuthCredential"
  | "challengeAuthCredential"
  | "verifyAuthCredential"
  | "listAuthSessions"
  | "refreshAuthSession"
  | "revokeAuthSession"
  | "createDelegatedKey"
  | "listDelegatedKeys"
  | "getDelegatedKeyById"
  | "revokeDelegatedKey"
> {
  return {
    createAuthCredential: ({ headers, body }, ctx) =>
      credentials.create(ctx, walletHeaders(headers), body),
    listAuthCredentials: async ({ query }, ctx) => ({
      status: 200,
      body: await credentials.list(ctx, query),
    }),
    revokeAuthCredential: ({ params, headers }, ctx) =>
      credentials.remove(ctx, params.id, walletHeaders(headers)),
    challengeAuthCredential: async ({ params, body }, ctx) => ({
      status: 200,
      body: await login.challenge(ctx, params.id, body ?? {}),
    }),
    verifyAuthCredential: ({ params, headers, body }, ctx) =>
      login.verify(ctx, params.id, walletHeaders(headers), body),
    listAuthSessions: async ({ query }, ctx) => ({
      status: 200,
      body: await sessions.list(ctx, query),
    }),
    refreshAuthSession: ({ params, headers, body }, ctx) =>
      sessions.refresh(ctx, params.id, walletHeaders(headers), body.clientPublicKey),
    revokeAuthSession: ({ params, headers }, ctx) =>
      sessions.revoke(ctx, params.id, walletHeaders(headers)),
    createDelegatedKey: ({ headers, body }, ctx) =>
      delegatedKeys.create(ctx, walletHeaders(headers), body),
    listDelegatedKeys: async ({ query }, ctx) => ({
      status: 200,
      body: await delegatedKeys.list(ctx, query),
    }),
    getDelegatedKeyById: async ({ params }, ctx) => ({
      status: 200,
      body: await delegatedKeys.get(ctx, params.id),
    }),
    revokeDelegatedKey: async ({ params }, ctx) => {
      await delegatedKeys.revoke(ctx, params.id);
      return { status: 204 };
    },
  };
}
