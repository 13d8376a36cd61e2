import type { Schemas } from "@payments-sandbox/client";
import type { PublicKeyForm } from "@payments-sandbox/crypto";
import type { AuthConfig } from "../../config.js";
import { sealSessionKeyBundle } from "../../crypto/bundles.js";
import {
  compressPublicKey,
  generateP256KeyPair,
  isValidP256PublicKeyHex,
} from "../../crypto/p256-keys.js";
import { insert, one, q, run, type Row } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { invalidInput, notFound, fieldError } from "../../errors.js";
import type { Query } from "../../http/operation-types.js";
import type { RequestContext, Services } from "../../http/context.js";
import { newId } from "../../ids.js";
import { Activity } from "../../signing/activities.js";
import type { WalletHeaders } from "../../signing/headers.js";
import {
  authChallengeBody,
  type AuthChallengeBody,
  type ChallengeBody,
  type SignedRequests,
} from "../../signing/signed-requests.js";

type AuthMethodRow = Row<"AuthMethod">;
type SessionRow = Row<"AuthSession">;
export type AuthSession = Schemas["AuthSession"];
type AuthMethodType = Schemas["AuthMethodType"];

/** A session as GET /auth/sessions lists it: never with its signing key. */
export type ListedSession = Schemas["AuthSessionList"]["data"][number];

export function toListedSession(row: SessionRow): ListedSession {
  return {
    id: row.id,
    accountId: row.accountId,
    type: row.type as AuthMethodType,
    nickname: row.nickname,
    ...(row.credentialId !== null ? { credentialId: row.credentialId } : {}),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    expiresAt: row.expiresAt.toISOString(),
  };
}

export function toAuthSession(row: SessionRow, encryptedSessionSigningKey?: string): AuthSession {
  return {
    ...toListedSession(row),
    ...(encryptedSessionSigningKey !== undefined ? { encryptedSessionSigningKey } : {}),
  };
}

/** A fresh session key pair whose private half leaves only sealed to the client. */
export interface SealedSessionKey {
  /** Compressed hex: what the server keeps. */
  publicKey: string;
  encryptedSessionSigningKey: string;
}

/** Hex length of a compressed SEC1 key: what selects the client-held-key refresh. */
const COMPRESSED_HEX_LENGTH = 66;

/**
 * `clientPublicKey` must be a point on P-256, not just hex of the right
 * length; uncompressed unless the operation takes the compressed form.
 */
export function requireClientPublicKey(
  clientPublicKey: string,
  form: PublicKeyForm = "uncompressed",
): void {
  if (!isValidP256PublicKeyHex(clientPublicKey, form)) {
    throw invalidInput(`clientPublicKey is not a ${form} P-256 public key`, {
      errors: [fieldError("body.clientPublicKey", "not a point on P-256")],
    });
  }
}

export async function sealNewSessionKey(clientPublicKey: string): Promise<SealedSessionKey> {
  const key = generateP256KeyPair();
  return {
    publicKey: key.publicKeyHex,
    encryptedSessionSigningKey: sealSessionKeyBundle(key.privateKeyHex, clientPublicKey),
  };
}

/** The query of listAuthSessions, as validated. */
export type SessionFilter = Query<"listAuthSessions">;

export class SessionService {
  constructor(
    private readonly services: Services,
    private readonly config: AuthConfig,
    private readonly signing: SignedRequests,
  ) {}

  /** Creates a session for `method` whose signing key is `publicKey` (either form). */
  *create(ctx: RequestContext, method: AuthMethodRow, publicKey: string): SqlProgram<SessionRow> {
    const row = this.newRow(ctx, method, publicKey);
    yield* insert("AuthSession", row);
    return row;
  }

  /** A new session's row, for a caller that stores it with other writes. */
  newRow(ctx: RequestContext, method: AuthMethodRow, publicKey: string): SessionRow {
    const now = ctx.clock.now();
    return {
      id: newId("Session"),
      platformId: ctx.platformId,
      accountId: method.accountId,
      authMethodId: method.id,
      type: method.type,
      nickname: method.nickname,
      credentialId: method.type === "PASSKEY" ? method.credentialId : null,
      publicKey: compressPublicKey(publicKey),
      expiresAt: new Date(now.getTime() + this.config.sessionTtlSeconds * 1000),
      revokedAt: null,
      createdAt: now,
      updatedAt: now,
    };
  }

  /** An active session of this platform; revoked or expired ones are gone (404). */
  private async activeRow(ctx: RequestContext, id: string): Promise<SessionRow> {
    const row = await this.services.data.one(
      q
        .selectFrom("AuthSession")
        .selectAll()
        .where("id", "=", id)
        .where("platformId", "=", ctx.platformId)
        .where("revokedAt", "is", null)
        .where("expiresAt", ">", ctx.clock.now()),
    );
    if (!row) throw notFound("REFERENCE_NOT_FOUND", "No active session with this id.");
    return row;
  }

  /** Every active session of the wallet, newest first; none for an account that is not the platform's. */
  async list(ctx: RequestContext, filter: SessionFilter): Promise<{ data: ListedSession[] }> {
    const rows = await this.services.data.all(
      q
        .selectFrom("AuthSession")
        .selectAll()
        .where("platformId", "=", ctx.platformId)
        .where("accountId", "=", filter.accountId)
        .where("revokedAt", "is", null)
        .where("expiresAt", ">", ctx.clock.now())
        .orderBy("createdAt", "desc")
        .orderBy("id", "desc"),
    );
    return { data: rows.map(toListedSession) };
  }

  /**
   * Signed retry: a new signing key for the session. A compressed
   * `clientPublicKey` is the new key itself (the client holds its private
   * half, nothing is returned); an uncompressed one gets a fresh key sealed to
   * it (the legacy flow). Either way the session's previous key stops working.
   */
  async refresh(
    ctx: RequestContext,
    id: string,
    headers: WalletHeaders,
    clientPublicKey: string,
  ): Promise<{ status: 202; body: ChallengeBody } | { status: 201; body: AuthSession }> {
    const clientHeld = clientPublicKey.length === COMPRESSED_HEX_LENGTH;
    requireClientPublicKey(clientPublicKey, clientHeld ? "compressed" : "uncompressed");
    const session = await this.activeRow(ctx, id);
    const outcome = await this.signing.handle(ctx, headers, {
      activity: Activity.REFRESH_SESSION,
      accountId: session.accountId,
      parameters: { clientPublicKey, sessionId: session.id },
    });
    if (outcome.kind === "CHALLENGE") return { status: 202, body: outcome.body };

    const next = clientHeld
      ? { publicKey: compressPublicKey(clientPublicKey), encryptedSessionSigningKey: undefined }
      : await sealNewSessionKey(clientPublicKey);
    const now = ctx.clock.now();
    const ttlMs = this.config.sessionTtlSeconds * 1000;
    const signing = this.signing;
    const row = await this.services.data.transaction(function* () {
      yield* signing.consume(ctx, outcome.approval);
      const refreshed = yield* one(
        q
          .updateTable("AuthSession")
          .set({
            publicKey: next.publicKey,
            expiresAt: new Date(now.getTime() + ttlMs),
            updatedAt: now,
          })
          .where("id", "=", session.id)
          .where("platformId", "=", ctx.platformId)
          .where("revokedAt", "is", null)
          .where("expiresAt", ">", now)
          .returningAll(),
      );
      if (!refreshed) throw notFound("REFERENCE_NOT_FOUND", "No active session with this id.");
      return refreshed;
    });
    return { status: 201, body: toAuthSession(row, next.encryptedSessionSigningKey) };
  }

  /** Signed retry: revokes the session; afterwards its id is 404. */
  async revoke(
    ctx: RequestContext,
    id: string,
    headers: WalletHeaders,
  ): Promise<{ status: 202; body: AuthChallengeBody } | { status: 204 }> {
    const session = await this.activeRow(ctx, id);
    const action = {
      activity: Activity.DELETE_SESSION,
      accountId: session.accountId,
      parameters: { sessionId: session.id },
      authType: session.type,
    };
    const result = await this.signing.run(ctx, headers, action, function* () {
      const now = ctx.clock.now();
      const count = yield* run(
        q
          .updateTable("AuthSession")
          .set({ revokedAt: now, updatedAt: now })
          .where("id", "=", session.id)
          .where("platformId", "=", ctx.platformId)
          .where("revokedAt", "is", null),
      );
      if (count !== 1) throw notFound("REFERENCE_NOT_FOUND", "No active session with this id.");
    });
    return result.kind === "CHALLENGE"
      ? { status: 202, body: authChallengeBody(result.body) }
      : { status: 204 };
  }
}
