/**
 * A customer's SCA login state: the session a login opens, and the lock that
 * failed logins set. The SCA operations keep it; a quote's authorization
 * needs a live session (the live contract's 409 SCA_SESSION_REQUIRED) and
 * no lock (423 ACCOUNT_LOCKED), so it reads it here too.
 */
import type { Database } from "../../db/database.js";
import { q, type Row } from "../../db/query.js";
import { ApiError } from "../../errors.js";
import type { RequestContext } from "../../http/context.js";

export type LoginState = Row<"ScaLoginState">;

export function readLoginState(
  data: Database,
  ctx: RequestContext,
  customerId: string,
): Promise<LoginState | undefined> {
  return data.one(
    q
      .selectFrom("ScaLoginState")
      .selectAll()
      .where("customerId", "=", customerId)
      .where("platformId", "=", ctx.platformId),
  );
}

/** A login state as the API reports it at `now`: an ended lock is no lock. */
export function lockOf(state: LoginState | undefined, now: Date) {
  const lockedUntil =
    state && !state.suspended && state.lockedUntil !== null && state.lockedUntil > now
      ? state.lockedUntil
      : null;
  return {
    suspended: state?.suspended ?? false,
    lockedUntil,
    failedAttempts: state?.failedAttempts ?? 0,
    locked: (state?.suspended ?? false) || lockedUntil !== null,
  };
}

export function accountLocked(lock: ReturnType<typeof lockOf>): ApiError {
  return new ApiError(
    423,
    "ACCOUNT_LOCKED",
    lock.suspended
      ? `The customer's login is suspended after ${lock.failedAttempts} failed attempts; record RESET_PASSWORD_COMPLETED to lift it`
      : `The customer's login is locked until ${lock.lockedUntil?.toISOString()} after ${lock.failedAttempts} failed attempts`,
    {
      details: {
        suspended: lock.suspended,
        ...(lock.lockedUntil ? { lockedUntil: lock.lockedUntil.toISOString() } : {}),
        failedAttempts: lock.failedAttempts,
      },
    },
  );
}

/**
 * The customer may authorize a payment now: not locked (423), and logged in
 * through SCA with a session not yet expired (409 SCA_SESSION_REQUIRED).
 */
export async function requireScaSession(
  data: Database,
  ctx: RequestContext,
  customerId: string,
): Promise<void> {
  const now = ctx.clock.now();
  const state = await readLoginState(data, ctx, customerId);
  const lock = lockOf(state, now);
  if (lock.locked) throw accountLocked(lock);
  const expiresAt = state?.sessionExpiresAt ?? null;
  if (expiresAt === null || expiresAt <= now) {
    throw new ApiError(
      409,
      "SCA_SESSION_REQUIRED",
      expiresAt === null
        ? `Customer ${customerId} has no SCA login session: complete an SCA login (POST /sca/login/start, then /sca/login/complete), then authorize again`
        : `The SCA login session of customer ${customerId} expired at ${expiresAt.toISOString()}: complete an SCA login again, then authorize again`,
    );
  }
}
