import type { WebhookConfig } from "../config.js";
import { all, q, run } from "../db/query.js";
import type { SqlProgram } from "../db/sql.js";

/**
 * Delay before the next attempt after `failedAttempts` failures: exponential
 * from the base, capped, with "equal jitter" (half fixed, half random) so that
 * receivers coming back up are not hit by every queued retry at once.
 */
export function retryDelayMs(
  failedAttempts: number,
  config: Pick<WebhookConfig, "retryBaseMs" | "retryMaxDelayMs">,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(failedAttempts - 1, 0), 40);
  const full = Math.min(config.retryMaxDelayMs, config.retryBaseMs * 2 ** exponent);
  return Math.round(full / 2 + random() * (full / 2));
}

/**
 * Whether retries are over: the retry window starts at the first attempt of
 * the current round and lasts `maxAgeMs` (24 hours by default).
 */
export function retryWindowOver(firstAttemptAt: Date, now: Date, maxAgeMs: number): boolean {
  return now.getTime() - firstAttemptAt.getTime() >= maxAgeMs;
}

/**
 * Moves a platform's pending webhook retries `ms` earlier, as if that much
 * time had passed: for the sandbox clock, so advancing it reaches retries
 * (and the end of the retry window) at once. Runs in the caller's
 * transaction.
 */
export function* advanceWebhookRetries(platformId: string, ms: number): SqlProgram<number> {
  if (ms <= 0) return 0;
  const pending = yield* all(
    q
      .selectFrom("WebhookEvent")
      .select(["id", "nextAttemptAt", "firstAttemptAt"])
      .where("platformId", "=", platformId)
      .where("status", "=", "PENDING"),
  );
  for (const event of pending) {
    yield* run(
      q
        .updateTable("WebhookEvent")
        .set({
          nextAttemptAt: new Date(event.nextAttemptAt.getTime() - ms),
          ...(event.firstAttemptAt
            ? { firstAttemptAt: new Date(event.firstAttemptAt.getTime() - ms) }
            : {}),
        })
        .where("id", "=", event.id),
    );
  }
  return pending.length;
}
