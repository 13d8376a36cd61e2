import type { Schemas } from "@payments-sandbox/client";
import { StampError, decodeStamp, type ParsedStamp } from "@payments-sandbox/crypto";
import { walletSignatureOutcome } from "@payments-sandbox/sandbox-rules";
import type { AuthConfig } from "../config.js";
import { publicKeysEqual } from "../crypto/p256-keys.js";
import { runCrypto } from "../crypto/off-thread.js";
import { countOf, insert, one, q } from "../db/query.js";
import type { SqlInsert, SqlProgram } from "../db/sql.js";
import { ApiError } from "../errors.js";
import type { RequestContext, Services } from "../http/context.js";
import {
  bindingDigest,
  consumeChallenge,
  newChallenge,
  pendingChallenge,
  requirePending,
  type ChallengeRow,
  type SignerRule,
} from "./challenges.js";
import { Activity, type DelegatedScope } from "./activities.js";
import { isFirstLeg, type WalletHeaders } from "./headers.js";

/** The 202 body: SignedRequestChallenge, plus `type` for AuthSignedRequestChallenge. */
export type ChallengeBody = Schemas["SignedRequestChallenge"] & {
  type?: Schemas["AuthMethodType"];
};

/** The 202 body of the auth operations, which names the credential type it concerns. */
export type AuthChallengeBody = Schemas["AuthSignedRequestChallenge"];

/** A challenge issued for an action with an `authType`, as the auth operations answer it. */
export function authChallengeBody(body: ChallengeBody): AuthChallengeBody {
  if (body.type === undefined) throw new Error("challenge was issued without its authType");
  return { ...body, type: body.type };
}

/** A signed action as the service describes it, identically on both legs. */
export interface SignedAction {
  /** `ACTIVITY_TYPE_…` in `payloadToSign`. */
  activity: string;
  /** The internal account whose sessions may sign. */
  accountId: string;
  /** Every value the action depends on; signed, and compared on the retry. */
  parameters: Record<string, unknown>;
  /** Defaults to an active session of `accountId`. */
  signer?: SignerRule;
  authMethodId?: string;
  /** `type` of an AuthSignedRequestChallenge; omitted for SignedRequestChallenge. */
  authType?: string;
  /** What the retry must repeat, when more than `parameters` (default). */
  binding?: unknown;
  /** Server-side values the flow needs when the challenge is answered. */
  data?: Record<string, unknown>;
}

/** A verified signed retry, ready to be consumed with the action. */
export interface Approval {
  challenge: ChallengeRow;
  /** When the first leg ran: checks that depend on time use this. */
  issuedAt: Date;
  /** Compressed hex of the key that stamped the retry; absent for the legacy value. */
  signerPublicKey?: string;
  /** The session that signed, for SESSION challenges stamped for real. */
  sessionId?: string;
}

export type SignedOutcome =
  { kind: "CHALLENGE"; body: ChallengeBody } | { kind: "APPROVED"; approval: Approval };

/** What a signed action came to: a challenge (first leg), or the action's result. */
export type SignedResult<T> =
  { kind: "CHALLENGE"; body: ChallengeBody } | { kind: "DONE"; value: T };

const walletError = (code: string, message: string, reason?: string) =>
  new ApiError(401, code, message, reason ? { reason } : {});

/**
 * The decoded stamp; 401 MALFORMED unless the header is well formed. Whether
 * its key is a curve point is checked with the signature (signerOf): that is
 * curve arithmetic, which runs where runCrypto puts it, not necessarily on
 * the request thread.
 */
function requireWellFormed(header: string): ParsedStamp {
  try {
    return decodeStamp(header);
  } catch (err) {
    throw walletError(
      "WALLET_SIGNATURE_MALFORMED",
      "Service-Wallet-Signature is not a well-formed stamp.",
      err instanceof Error ? err.message : undefined,
    );
  }
}

/**
 * The compressed key whose signature over `payload` the stamp carries; 401
 * MALFORMED when its key is not a P-256 point, INVALID when it does not verify.
 */
async function signerOf(stamp: ParsedStamp, payload: string): Promise<string> {
  try {
    return (await runCrypto("verifyStamp", stamp, payload)).publicKey;
  } catch (err) {
    if (err instanceof StampError && err.kind === "MALFORMED") {
      throw walletError(
        "WALLET_SIGNATURE_MALFORMED",
        "Service-Wallet-Signature is not a well-formed stamp.",
        err.message,
      );
    }
    throw walletError(
      "WALLET_SIGNATURE_INVALID",
      "The wallet signature is not valid for this request.",
      "Signature does not verify over payloadToSign",
    );
  }
}

export function toChallengeBody(row: ChallengeRow): ChallengeBody {
  return {
    payloadToSign: row.payload,
    requestId: row.id,
    expiresAt: row.expiresAt.toISOString(),
    ...(row.authType !== null ? { type: row.authType as Schemas["AuthMethodType"] } : {}),
  };
}

/**
 * The one signed-retry mechanism. The first call of a signed flow (no wallet
 * headers) stores a challenge and answers 202 with `payloadToSign`; the retry
 * repeats the request with `Service-Wallet-Signature` and `Request-Id`, and is
 * checked here: headers present, challenge pending, same request, stamp valid
 * over the stored payload, signer allowed. The caller then performs the action
 * and calls `consume` in the same transaction.
 */
export class SignedRequests {
  constructor(
    private readonly services: Services,
    private readonly config: AuthConfig,
  ) {}

  /** First leg → a new challenge; retry → the verified approval. */
  async handle(
    ctx: RequestContext,
    headers: WalletHeaders,
    action: SignedAction,
  ): Promise<SignedOutcome> {
    if (isFirstLeg(headers)) return { kind: "CHALLENGE", body: await this.issue(ctx, action) };
    return {
      kind: "APPROVED",
      approval: await this.approve(ctx, headers, {
        activity: action.activity,
        accountId: action.accountId,
        binding: action.binding ?? action.parameters,
      }),
    };
  }

  async issue(ctx: RequestContext, action: SignedAction): Promise<ChallengeBody> {
    return toChallengeBody(await this.issueRow(ctx, action));
  }

  /** Stores a challenge and returns its row (flows that answer with more than the 202 body). */
  async issueRow(ctx: RequestContext, action: SignedAction): Promise<ChallengeRow> {
    return this.services.data.transaction(() => this.challengeStep(ctx, action));
  }

  /** Stores a challenge, as a step of a caller's transaction. */
  *challengeStep(ctx: RequestContext, action: SignedAction): SqlProgram<ChallengeRow> {
    const row = this.newChallenge(ctx, action);
    yield* insert("SignedChallenge", row);
    return row;
  }

  /** A new challenge's row, for a caller that stores it with other writes. */
  newChallenge(ctx: RequestContext, action: SignedAction): ChallengeRow {
    return newChallenge({
      platformId: ctx.platformId,
      accountId: action.accountId,
      activity: action.activity,
      parameters: action.parameters,
      binding: action.binding ?? action.parameters,
      signer: action.signer ?? { kind: "SESSION" },
      ...(action.authMethodId !== undefined ? { authMethodId: action.authMethodId } : {}),
      ...(action.authType !== undefined ? { authType: action.authType } : {}),
      ...(action.data !== undefined ? { data: action.data } : {}),
      now: ctx.clock.now(),
      ttlSeconds: this.config.challengeTtlSeconds,
    });
  }

  /**
   * Verifies a signed retry against the challenge its Request-Id names.
   * `expected` is what this request is: the action, the account and the
   * values the first leg bound. `found`: the challenge, when the caller read
   * it (by this Request-Id, on this platform) with its own row.
   */
  async approve(
    ctx: RequestContext,
    headers: WalletHeaders,
    expected: { activity: string; accountId: string; binding: unknown },
    found?: { challenge: ChallengeRow | undefined },
  ): Promise<Approval> {
    const { signature, requestId } = headers;
    if (signature === undefined) {
      throw walletError(
        "WALLET_SIGNATURE_MISSING",
        "Service-Wallet-Signature is required on the signed retry.",
        "Request-Id sent without Service-Wallet-Signature",
      );
    }
    if (requestId === undefined) {
      throw walletError(
        "REQUEST_ID_MISSING",
        "The Request-Id header is required on a signed retry.",
        "Service-Wallet-Signature sent without Request-Id",
      );
    }
    const legacy =
      this.config.legacyShortcuts &&
      walletSignatureOutcome(signature).outcome.kind === "LEGACY_ACCEPT";
    // 401 MALFORMED for a header that is not a stamp, before any lookup; its
    // key and signature are checked below.
    const stamp = legacy ? undefined : requireWellFormed(signature);

    const now = ctx.clock.now();
    const given = found?.challenge;
    if (given && (given.id !== requestId || given.platformId !== ctx.platformId)) {
      throw new Error(`challenge ${given.id} read for Request-Id ${requestId}`);
    }
    const challenge = found
      ? requirePending(found.challenge, now)
      : await pendingChallenge(this.services.data, { platformId: ctx.platformId, requestId, now });
    const mismatch =
      challenge.activity !== expected.activity
        ? "Request-Id was issued for another action"
        : challenge.accountId !== expected.accountId
          ? "Request-Id was issued for another account"
          : challenge.bindingDigest !== bindingDigest(expected.binding)
            ? "Request body differs from the one payloadToSign was issued for"
            : // Passkey challenges are answered with a WebAuthn assertion, not a stamp.
              challenge.signerKind === "PASSKEY"
              ? "Request-Id names a passkey challenge, answered with an assertion"
              : undefined;
    if (mismatch !== undefined) {
      throw walletError(
        "WALLET_SIGNATURE_BODY_MISMATCH",
        "The request does not match the one the signed payload was issued for.",
        mismatch,
      );
    }
    const approval: Approval = { challenge, issuedAt: challenge.createdAt };
    if (stamp === undefined) return approval;

    const signer = await signerOf(stamp, challenge.payload);
    approval.signerPublicKey = signer;

    if (challenge.signerKind === "KEY") {
      const bound = challenge.signerPublicKey;
      // `signer` is a point (its signature verified) in compressed lowercase
      // hex: the same text is the same key, with no curve arithmetic here.
      if (!bound || (signer !== bound.toLowerCase() && !publicKeysEqual(signer, bound))) {
        throw walletError(
          "WALLET_SIGNATURE_INVALID",
          "The signing key does not match the key bound to this request.",
          "Signer is not the key bound into the verification token",
        );
      }
      return approval;
    }

    // SESSION: the stamp's key must be an active session key of this account
    // (CUSTOMER_SESSION: of any embedded wallet of this customer).
    approval.sessionId = await this.sessionOf(ctx, signer, {
      kind: challenge.signerKind === "CUSTOMER_SESSION" ? "CUSTOMER_SESSION" : "SESSION",
      accountId: challenge.accountId,
      now,
    });
    return approval;
  }

  /**
   * A stamp sent with the request itself, over a payload the caller already
   * holds (a quote's `payloadToSign`): no challenge, no Request-Id. The
   * signer must be a key of an active, unexpired session of `accountId`.
   * Returns that session's id; 401 WALLET_SIGNATURE_MISSING, _MALFORMED or
   * _INVALID otherwise, each with a reason.
   */
  async verifySessionStamp(
    ctx: RequestContext,
    header: string | undefined,
    payload: string,
    accountId: string,
  ): Promise<string> {
    if (header === undefined) {
      throw walletError(
        "WALLET_SIGNATURE_MISSING",
        "Service-Wallet-Signature is required for this request.",
        "Stamp the payloadToSign of this request with a session key of the wallet and send it in Service-Wallet-Signature",
      );
    }
    const signer = await signerOf(requireWellFormed(header), payload);
    return this.sessionOf(ctx, signer, { kind: "SESSION", accountId, now: ctx.clock.now() });
  }

  /**
   * The active, unexpired session whose key is `signer`: of the account
   * (SESSION), or of any embedded wallet of the customer `accountId` names
   * (CUSTOMER_SESSION). 401 WALLET_SIGNATURE_INVALID when there is none.
   */
  private async sessionOf(
    ctx: RequestContext,
    signer: string,
    scope: { kind: "SESSION" | "CUSTOMER_SESSION"; accountId: string; now: Date },
  ): Promise<string> {
    const sessions = q
      .selectFrom("AuthSession")
      .select("AuthSession.id")
      .where("AuthSession.platformId", "=", ctx.platformId)
      .where("AuthSession.publicKey", "=", signer)
      .where("AuthSession.revokedAt", "is", null)
      .where("AuthSession.expiresAt", ">", scope.now);
    const session = await this.services.data.one(
      scope.kind === "CUSTOMER_SESSION"
        ? sessions
            .innerJoin("InternalAccount", "InternalAccount.id", "AuthSession.accountId")
            .where("InternalAccount.customerId", "=", scope.accountId)
            .where("InternalAccount.platformId", "=", ctx.platformId)
            .where("InternalAccount.type", "=", "EMBEDDED_WALLET")
        : sessions.where("AuthSession.accountId", "=", scope.accountId),
    );
    if (!session) {
      // A delegated key is found, and refused: it signs only what its scope
      // names (verifyDelegated), never a session's actions.
      const delegated = await this.services.data.one(
        q
          .selectFrom("DelegatedKey")
          .select("id")
          .where("platformId", "=", ctx.platformId)
          .where("publicKey", "=", signer),
      );
      throw walletError(
        "WALLET_SIGNATURE_INVALID",
        "The wallet signature is not valid for this request.",
        delegated
          ? "Signer is a delegated key, which cannot sign this action"
          : "Signer is not an active session key of this wallet",
      );
    }
    return session.id;
  }

  /**
   * A stamp made with a delegated key the sandbox keeps, over `payload` (an
   * action of the key's scope), checked like a retry's stamp: the signature,
   * then the signer, which must be an ACTIVE delegated key of the account
   * whose scope covers this action (its funding source for a card payment,
   * itself for its revocation). Returns the key's id. A PENDING or REVOKED
   * key, or any other key, is 401 WALLET_SIGNATURE_INVALID.
   */
  async verifyDelegated(
    ctx: RequestContext,
    header: string,
    payload: string,
    scope: DelegatedScope,
  ): Promise<string> {
    const signer = await signerOf(requireWellFormed(header), payload);
    let keys = q
      .selectFrom("DelegatedKey")
      .select("id")
      .where("platformId", "=", ctx.platformId)
      .where("accountId", "=", scope.accountId)
      .where("publicKey", "=", signer)
      .where("status", "=", "ACTIVE");
    keys =
      scope.activity === Activity.SIGN_CARD_PAYMENT
        ? keys.where("fundingSourceId", "=", scope.fundingSourceId)
        : keys.where("id", "=", scope.delegatedKeyId);
    const key = await this.services.data.one(keys);
    if (!key) {
      throw walletError(
        "WALLET_SIGNATURE_INVALID",
        "The wallet signature is not valid for this request.",
        "Signer is not an ACTIVE delegated key for this action",
      );
    }
    return key.id;
  }

  /**
   * A whole signed action: the first leg answers with a challenge; a verified
   * retry runs `perform` in one transaction with the challenge's consumption,
   * so the action happens at most once per challenge, and not at all (with
   * the challenge left unused) if it fails.
   */
  async run<T>(
    ctx: RequestContext,
    headers: WalletHeaders,
    action: SignedAction,
    perform: () => SqlProgram<T>,
  ): Promise<SignedResult<T>> {
    const outcome = await this.handle(ctx, headers, action);
    if (outcome.kind === "CHALLENGE") return outcome;
    const value = await this.services.data.transaction(() =>
      this.performOnce(ctx, outcome.approval, perform),
    );
    return { kind: "DONE", value };
  }

  private *performOnce<T>(
    ctx: RequestContext,
    approval: Approval,
    perform: () => SqlProgram<T>,
  ): SqlProgram<T> {
    yield* this.consume(ctx, approval);
    return yield* perform();
  }

  /**
   * Consumes the challenge and writes `rows` with it, for an action that only
   * inserts: all or nothing. A retry signed by a key rather than a session
   * is then one guarded step, committed alone (on PostgreSQL one statement).
   */
  async consumeInserting(
    ctx: RequestContext,
    approval: Approval,
    rows: readonly SqlInsert[],
  ): Promise<void> {
    await this.services.data.transaction(
      () => this.consume(ctx, approval, rows),
      approval.sessionId === undefined ? "eachStep" : "transaction",
    );
  }

  /**
   * Consumes the challenge inside the action's transaction (single use),
   * with `rows` written in the same guarded step.
   */
  *consume(
    ctx: RequestContext,
    approval: Approval,
    rows: readonly SqlInsert[] = [],
  ): SqlProgram<void> {
    const now = ctx.clock.now();
    yield* consumeChallenge(approval.challenge, now, rows);
    if (approval.sessionId !== undefined) {
      // The signing session may have been revoked since the retry was checked.
      const live = countOf(
        yield* one(
          q
            .selectFrom("AuthSession")
            .select((eb) => eb.fn.countAll().as("count"))
            .where("id", "=", approval.sessionId)
            .where("revokedAt", "is", null)
            .where("expiresAt", ">", now),
        ),
      );
      if (live === 0) {
        throw walletError(
          "WALLET_SIGNATURE_INVALID",
          "The wallet signature is not valid for this request.",
          "Signer is not an active session key of this wallet",
        );
      }
    }
  }
}
