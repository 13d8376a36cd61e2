import { sha256Hex } from "../crypto/sha256.js";
import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import { q } from "../db/query.js";
import { isUniqueViolation } from "../db/errors.js";
import { ApiError, Reason } from "../errors.js";
import type { RequestContext } from "./context.js";

// Idempotency-Key support for any POST operation, as the most trusted payments
// APIs do it: the first response (status and body) is kept and replayed for
// the same key; the same key with other parameters is refused; the same key
// while the first request still runs is a 409. A key is claimed by inserting
// its row (platform + key is the primary key), so of two concurrent requests
// exactly one inserts and the other sees the row.

export interface IdempotentResult {
  status: number;
  body: unknown;
}

export interface IdempotencyOptions {
  /** How long a completed response is kept (at least 24 hours). */
  retentionMs: number;
  /**
   * How long a claim holds while its request runs. A claim left behind by a
   * crashed process can be taken over after this.
   */
  leaseMs: number;
  /** Test seam: runs right after a key is claimed, before the operation. */
  afterClaim?: (key: string) => Promise<void>;
}

export const defaultIdempotencyOptions: IdempotencyOptions = {
  retentionMs: 24 * 60 * 60 * 1000,
  leaseMs: 60_000,
};

/**
 * Whether an error is the operation's answer, kept and replayed like a
 * success: a 4xx decided by the operation. Not kept: server errors (the
 * client may retry), and refused credentials or signatures (401) and rate
 * limits (429), which say nothing about the operation and which the client
 * fixes before retrying with the same key.
 */
function isOperationResult(err: unknown): err is ApiError {
  return (
    err instanceof ApiError &&
    err.status >= 400 &&
    err.status < 500 &&
    err.status !== 401 &&
    err.status !== 429
  );
}

const IN_PROGRESS = "IN_PROGRESS";

/** The same key while its first request runs: production's 409 code, the cause in `reason`. */
const inProgress = () =>
  new ApiError(
    409,
    "CONFLICT",
    "A request with this Idempotency-Key is still being processed; retry later",
    { reason: Reason.idempotencyInProgress },
  );
const COMPLETED = "COMPLETED";

export class IdempotencyStore {
  constructor(
    private readonly db: Database,
    /** Real time: retention and leases do not follow the sandbox clock. */
    private readonly clock: Clock,
    private readonly options: IdempotencyOptions = defaultIdempotencyOptions,
  ) {}

  /**
   * Runs `execute` once per (platform, key). `requestHash` identifies the
   * parameters; a later request with the same key must carry the same hash.
   * Errors the operation throws as 4xx ApiErrors are its response and are
   * kept too (except 401 and 429); anything else releases the key and
   * propagates.
   */
  async run(
    platformId: string,
    key: string,
    requestHash: string,
    execute: () => Promise<IdempotentResult>,
  ): Promise<IdempotentResult & { replayed: boolean }> {
    const replay = await this.claim(platformId, key, requestHash);
    if (replay) return { ...replay, replayed: true };

    let result: IdempotentResult;
    try {
      await this.options.afterClaim?.(key);
      result = await execute();
    } catch (err) {
      if (!isOperationResult(err)) {
        await this.release(platformId, key);
        throw err;
      }
      result = { status: err.status, body: err.toBody() };
    }
    await this.db.execute(
      q
        .updateTable("IdempotencyRecord")
        .set({
          status: COMPLETED,
          responseStatus: result.status,
          responseBody: JSON.stringify(result.body),
        })
        .where("platformId", "=", platformId)
        .where("key", "=", key)
        .where("status", "=", IN_PROGRESS),
    );
    return { ...result, replayed: false };
  }

  /** Claims the key; returns the stored response instead when it already has one. */
  private async claim(
    platformId: string,
    key: string,
    requestHash: string,
  ): Promise<IdempotentResult | undefined> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const now = this.clock.now();
      const lockedUntil = new Date(now.getTime() + this.options.leaseMs);
      try {
        await this.db.execute(
          q.insertInto("IdempotencyRecord").values({
            platformId,
            key,
            requestHash,
            status: IN_PROGRESS,
            lockedUntil,
            createdAt: now,
            expiresAt: new Date(now.getTime() + this.options.retentionMs),
          }),
        );
        return undefined;
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
      const existing = await this.db.one(
        q
          .selectFrom("IdempotencyRecord")
          .selectAll()
          .where("platformId", "=", platformId)
          .where("key", "=", key),
      );
      if (!existing) continue; // released in between: try again
      if (existing.expiresAt <= now) {
        await this.db.execute(
          q
            .deleteFrom("IdempotencyRecord")
            .where("platformId", "=", platformId)
            .where("key", "=", key)
            .where("expiresAt", "<=", now),
        );
        continue;
      }
      if (existing.requestHash !== requestHash) {
        throw new ApiError(
          400,
          "INVALID_INPUT",
          "This Idempotency-Key was already used with different parameters; use a new key for a new request",
          { reason: Reason.idempotencyKeyReused },
        );
      }
      if (existing.status === COMPLETED && existing.responseStatus !== null) {
        return {
          status: existing.responseStatus,
          body: JSON.parse(existing.responseBody ?? "null") as unknown,
        };
      }
      if (existing.lockedUntil > now) {
        throw inProgress();
      }
      // A claim whose request never finished (its process stopped): take it over.
      const taken = await this.db.execute(
        q
          .updateTable("IdempotencyRecord")
          .set({ lockedUntil })
          .where("platformId", "=", platformId)
          .where("key", "=", key)
          .where("status", "=", IN_PROGRESS)
          .where("lockedUntil", "=", existing.lockedUntil),
      );
      if (taken === 1) return undefined;
    }
    throw inProgress();
  }

  private async release(platformId: string, key: string): Promise<void> {
    await this.db.execute(
      q
        .deleteFrom("IdempotencyRecord")
        .where("platformId", "=", platformId)
        .where("key", "=", key)
        .where("status", "=", IN_PROGRESS),
    );
  }
}

/** JSON with object keys sorted, so equal parameters hash equally whatever their order. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value as Record<string, unknown>)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** The parameters compared between requests with the same key. */
export interface IdempotentRequest {
  operationId: string;
  key: string;
  params: unknown;
  body: unknown;
  ctx: RequestContext;
}

/**
 * Runs an operation under its Idempotency-Key. The parameters compared
 * between requests are the operation, its path parameters, its body and who
 * calls (the platform, or which agent).
 */
export async function runIdempotent(
  store: IdempotencyStore,
  request: IdempotentRequest,
  execute: () => Promise<IdempotentResult>,
): Promise<IdempotentResult> {
  const { ctx } = request;
  const requestHash = sha256Hex(
    JSON.stringify(
      canonical({
        operation: request.operationId,
        params: request.params,
        body: request.body ?? null,
        caller: ctx.agent?.agentId ?? "platform",
      }),
    ),
  );
  return store.run(ctx.platformId, request.key, requestHash, execute);
}
