import { sha256Hex } from "../crypto/sha256.js";
import type { Database } from "../db/database.js";
import { batchedRead, guarded, prepared, q, type Row } from "../db/query.js";
import type { SqlInsert, SqlProgram } from "../db/sql.js";
import { ApiError } from "../errors.js";
import { newId } from "../ids.js";
import { canonicalJson } from "./canonical-json.js";

export type ChallengeRow = Row<"SignedChallenge">;

/** Who may answer a challenge. */
export type SignerRule =
  /** A key of an active, unexpired session of the challenge's internal account. */
  | { kind: "SESSION" }
  /** Exactly this public key (the TEK of an OTP login). */
  | { kind: "KEY"; publicKey: string }
  /** A WebAuthn assertion by the passkey of `authMethodId`. */
  | { kind: "PASSKEY" }
  /**
   * A key of an active, unexpired session of any embedded wallet of a
   * customer: for actions on the customer itself, whose `accountId` is then
   * the customer's id.
   */
  | { kind: "CUSTOMER_SESSION" };

export interface NewChallenge {
  platformId: string;
  accountId: string;
  /** `ACTIVITY_TYPE_…`: names the action in `payloadToSign`. */
  activity: string;
  /** Every value the action depends on; part of `payloadToSign`. */
  parameters: Record<string, unknown>;
  /** What the retry must repeat exactly; defaults to `parameters`. */
  binding?: unknown;
  signer: SignerRule;
  authMethodId?: string;
  /** Credential type echoed as `type` in an AuthSignedRequestChallenge. */
  authType?: string;
  /** Values the flow needs when the challenge is answered (kept server-side). */
  data?: Record<string, unknown>;
  now: Date;
  ttlSeconds: number;
}

/** Digest of the values a retry must repeat. */
export function bindingDigest(binding: unknown): string {
  return sha256Hex(canonicalJson(binding));
}

/**
 * The payload the client signs: canonical JSON of
 * {organizationId, parameters, timestampMs (string), type}.
 */
export function payloadToSign(
  platformId: string,
  activity: string,
  parameters: Record<string, unknown>,
  now: Date,
): string {
  return canonicalJson({
    organizationId: platformId,
    parameters,
    timestampMs: String(now.getTime()),
    type: activity,
  });
}

/** A new challenge's row, for the caller to store. */
export function newChallenge(input: NewChallenge): ChallengeRow {
  return {
    id: newId("Request"),
    platformId: input.platformId,
    accountId: input.accountId,
    activity: input.activity,
    payload: payloadToSign(input.platformId, input.activity, input.parameters, input.now),
    bindingDigest: bindingDigest(input.binding ?? input.parameters),
    signerKind: input.signer.kind,
    signerPublicKey: input.signer.kind === "KEY" ? input.signer.publicKey : null,
    authMethodId: input.authMethodId ?? null,
    authType: input.authType ?? null,
    data: input.data ? JSON.stringify(input.data) : null,
    expiresAt: new Date(input.now.getTime() + input.ttlSeconds * 1000),
    consumedAt: null,
    createdAt: input.now,
  };
}

/** Every signed retry reads its challenge (and consumes it, below). */
export const challengeRows = batchedRead({ id: "id", platformId: "platformId" }, (where) =>
  q.selectFrom("SignedChallenge").selectAll().where(where),
);
const consume = prepared((args: { id: string; platformId: string; now: Date }) =>
  q
    .updateTable("SignedChallenge")
    .set({ consumedAt: args.now })
    .where("id", "=", args.id)
    .where("platformId", "=", args.platformId)
    .where("consumedAt", "is", null)
    .returning("id"),
);

export function requestIdRejected(reason: string): ApiError {
  return new ApiError(
    401,
    "UNAUTHORIZED",
    "The Request-Id does not name a pending challenge for this request.",
    { reason },
  );
}

/**
 * The pending challenge a `Request-Id` names on this platform. Unknown
 * (including another platform's), expired or consumed → 401. The caller
 * checks that it belongs to the request at hand.
 */
export async function pendingChallenge(
  db: Database,
  params: { platformId: string; requestId: string; now: Date },
): Promise<ChallengeRow> {
  const row = await db.batched(challengeRows, {
    id: params.requestId,
    platformId: params.platformId,
  });
  return requirePending(row, params.now);
}

/** {@link pendingChallenge}'s checks, on the row its Request-Id found (if any). */
export function requirePending(row: ChallengeRow | undefined, now: Date): ChallengeRow {
  if (!row) throw requestIdRejected("Request-Id is unknown");
  if (row.consumedAt !== null) throw requestIdRejected("Request-Id already consumed");
  if (row.expiresAt.getTime() <= now.getTime()) {
    throw requestIdRejected("Request-Id has expired");
  }
  return row;
}

/**
 * Marks a challenge used, inside the transaction that performs the action, so
 * the action and the consumption commit together; `rows` are written in the
 * same guarded step. Of two concurrent retries with the same Request-Id only
 * one gets through, and nothing is written for the other.
 */
export function* consumeChallenge(
  challenge: ChallengeRow,
  now: Date,
  rows: readonly SqlInsert[] = [],
): SqlProgram<void> {
  const consumed = yield* guarded(
    consume({ id: challenge.id, platformId: challenge.platformId, now }),
    rows,
  );
  if (consumed === undefined) throw requestIdRejected("Request-Id already consumed");
}

export function challengeData<T>(row: ChallengeRow): T {
  return JSON.parse(row.data ?? "{}") as T;
}
