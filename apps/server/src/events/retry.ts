import type { WebhookConfig } from "../config.js";
import type { Db, Tx } from "../db/client.js";

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
export async function advanceWebhookRetries(
  tx: Tx | Db,
  platformId: string,
  ms: number,
): Promise<number> {
  if (ms <= 0) return 0;
  const pending = await tx.webhookEvent.findMany({
    where: { platformId, status: "PENDING" },
    select: { id: true, nextAttemptAt: true, firstAttemptAt: true },
  });
  for (const event of pending) {
    await tx.webhookEvent.update({
      where: { id: event.id },
      data: {
        nextAttemptAt: new Date(event.nextAttemptAt.getTime() - ms),
        ...(event.firstAttemptAt
          ? { firstAttemptAt: new Date(event.firstAttemptAt.getTime() - ms) }
          : {}),
      },
    });
  }
  return pending.length;
}
