import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { performance } from "node:perf_hooks";
import { webhookSignature } from "./webhook-signer.js";
import { systemClock, type Clock } from "../clock.js";
import type { WebhookConfig } from "../config.js";
import type { Logger } from "../logger.js";
import { onEventEmitted } from "./outbox.js";
import type { AttemptRecord, ClaimedEvent, OutboxStore } from "./outbox-store.js";
import { retryDelayMs, retryWindowOver } from "./retry.js";
import { WebhookPoster, type PostResult } from "./webhook-post.js";

// Delivers outbox events (see outbox.ts) to each platform's webhook URL.
//
// - Claims: an event is taken with a conditional update that sets a lease
//   (lockedUntil, lockedBy); only one process can win it, and a lease left
//   by a crashed process expires and the event is taken over. The lease
//   outlives the delivery timeout, so a live owner is never overtaken.
// - Order: an event is not attempted while an earlier PENDING event of the
//   same platform and object exists. A blocked event is put off until its
//   predecessor's next attempt (or lease end); finishing an event wakes its
//   successor.
// - Fairness: a bounded pool per process, with a cap per platform (an eighth
//   of the pool by default), so a slow or hanging receiver holds a few slots
//   at most and the other platforms' events keep flowing.
// - At least once: a 2xx is delivered; anything else, a timeout or a network
//   error is retried with back-off until the retry window ends (FAILED).
//   Every attempt is recorded.
// - No URL: events wait as PENDING (the API shows NO_ENDPOINT) and are
//   delivered, in order, once a URL is set.
// - Cost: a poll is one transaction whose queries are bounded by the free
//   slots, not by the backlog, and the attempts that finish together are
//   recorded in one transaction, each with its event's new state
//   (outbox-store.ts).

const NUDGE_DELAY_MS = 5;
/**
 * Due events read per platform beyond its free slots, so that a few found
 * blocked (not their object's turn) or taken by another process do not leave
 * slots empty until the next poll.
 */
const READ_AHEAD = 4;

/** Its platform as read by the poll that claimed it: a URL change applies from the next attempt. */
interface Claim extends ClaimedEvent {
  token: string;
}

type Outcome = PostResult;

export interface DispatcherOptions {
  store: OutboxStore;
  log: Logger;
  config: WebhookConfig;
  /**
   * The server's base clock, under the platforms' sandbox clocks: attempt
   * times are this plus the platform's offset, like every other API time.
   * Scheduling (due times, leases) always uses real time, as emitEvent does.
   */
  clock: Clock;
}

const realTime: Clock = systemClock;

export class WebhookDispatcher {
  private readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  /** Requests in flight (the pool's slots), by event id: their platform. */
  private readonly inFlight = new Map<string, string>();
  /** Deliveries not yet recorded, requests in flight included. */
  private readonly unsettled = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private timerDue = Number.POSITIVE_INFINITY;
  private tickRunning: Promise<void> | undefined;
  private tickAgain = false;
  private started = false;
  private stopped = false;
  private unsubscribe: (() => void) | undefined;
  /** Attempts waiting to be recorded together (see record()). */
  private unrecorded: {
    record: AttemptRecord;
    recorded: () => void;
    failed: (e: unknown) => void;
  }[] = [];

  private readonly poster: WebhookPoster;

  constructor(private readonly options: DispatcherOptions) {
    this.poster = new WebhookPoster(options.config.timeoutMs);
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.unsubscribe = onEventEmitted(() => this.nudge());
    this.schedule(0);
  }

  /** Look for due events soon rather than at the next poll. */
  nudge(): void {
    this.schedule(NUDGE_DELAY_MS);
  }

  /**
   * Stops polling, interrupts deliveries in flight (each is recorded and
   * released for immediate retry) and waits for them to settle.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.poster.interrupt();
    await this.tickRunning;
    await Promise.allSettled(this.unsettled);
    this.poster.close();
  }

  /**
   * One signed POST of an envelope, as every delivery is made: the
   * dispatcher's attempts, and the sandbox's synchronous test webhook (which
   * keeps the receiver's answer).
   */
  async send(
    url: string,
    payload: string,
    privateKeyHex: string,
    keepBody = false,
  ): Promise<{ outcome: Outcome; latencyMs: number }> {
    const started = performance.now();
    const outcome = await this.poster.post(
      url,
      payload,
      {
        "Content-Type": "application/json",
        "X-Service-Signature": webhookSignature(payload, privateKeyHex),
        "User-Agent": "payments-sandbox-webhooks/1",
      },
      keepBody,
    );
    return { outcome, latencyMs: Math.max(0, Math.round(performance.now() - started)) };
  }

  private schedule(delayMs: number): void {
    if (this.stopped || !this.started) return;
    const due = Date.now() + delayMs;
    if (this.timer !== undefined && this.timerDue <= due) return;
    clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerDue = Number.POSITIVE_INFINITY;
      void this.tick();
    }, delayMs);
    // The HTTP server keeps the process alive; this timer must not.
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    if (this.tickRunning) {
      this.tickAgain = true;
      return;
    }
    let moreWork = false;
    this.tickRunning = (async () => {
      try {
        moreWork = await this.claimAndStart();
      } catch (err) {
        this.options.log.error({ err }, "webhook dispatcher poll failed");
      }
    })();
    await this.tickRunning;
    this.tickRunning = undefined;
    const again = this.tickAgain || moreWork;
    this.tickAgain = false;
    this.schedule(again ? NUDGE_DELAY_MS : this.options.config.pollMs);
  }

  /**
   * Claims what this process has room for and starts delivering it. True
   * when more due events may be waiting and slots are still free; when the
   * slots are full, a finishing delivery triggers the next look.
   */
  private async claimAndStart(): Promise<boolean> {
    const { store, config } = this.options;
    const free = config.concurrency - this.inFlight.size;
    if (free <= 0 || this.stopped) return false;
    const now = realTime.now();
    const token = `${this.owner}:${randomUUID()}`;
    const { claimed, mayBeMore } = await store.poll({
      now,
      leaseUntil: new Date(now.getTime() + config.leaseMs),
      token,
      free,
      platformCap: config.platformConcurrency,
      inFlight: this.inFlightPerPlatform(),
      readAhead: READ_AHEAD,
    });
    for (const event of claimed) this.startDelivery({ ...event, token });
    return mayBeMore && this.inFlight.size < config.concurrency;
  }

  private inFlightPerPlatform(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const platformId of this.inFlight.values()) {
      counts[platformId] = (counts[platformId] ?? 0) + 1;
    }
    return counts;
  }

  private startDelivery(claim: Claim): void {
    this.inFlight.set(claim.id, claim.platformId);
    const done = this.deliver(claim)
      .catch((err: unknown) => {
        // The lease expires and another poll retries; nothing is lost.
        this.options.log.error({ err, eventId: claim.id }, "webhook delivery bookkeeping failed");
      })
      .finally(() => {
        this.freeSlot(claim.id);
        this.unsettled.delete(done);
      });
    this.unsettled.add(done);
  }

  /**
   * Once the receiver has answered, the slot goes to the next event: the
   * attempt is still to be recorded, but the event stays leased until it is,
   * so no poll can take it (nor, while it is pending, its successor).
   */
  private freeSlot(eventId: string): void {
    if (!this.inFlight.delete(eventId)) return;
    // Soon, not at once: the slots that free up meanwhile are refilled by
    // the same poll.
    this.schedule(NUDGE_DELAY_MS);
  }

  private async deliver(claim: Claim): Promise<void> {
    const { clock, log } = this.options;
    const { platform } = claim;
    if (this.stopped) {
      // Shutting down: give the event back untouched.
      await this.options.store.release(claim.id, claim.token);
      return;
    }

    const startedAt = realTime.now();
    const attemptedAt = new Date(clock.now().getTime() + platform.clockOffsetSeconds * 1000);
    const { outcome, latencyMs } = await this.send(
      platform.webhookUrl,
      claim.payload,
      platform.webhookPrivateKey,
    );
    this.freeSlot(claim.id);

    await this.record({
      ...this.nextState(claim, outcome, startedAt),
      eventId: claim.id,
      token: claim.token,
      replayCount: claim.replayCount,
      attempt: {
        id: randomUUID(),
        attemptedAt,
        httpStatus: outcome.kind === "response" ? outcome.httpStatus : null,
        latencyMs,
        error: outcome.kind === "response" ? null : outcome.error,
      },
    });

    if (outcome.kind !== "response" || outcome.httpStatus >= 300) {
      log.info(
        {
          eventId: claim.id,
          platformId: claim.platformId,
          ...(outcome.kind === "response"
            ? { httpStatus: outcome.httpStatus }
            : { error: outcome.error }),
          latencyMs,
        },
        "webhook delivery attempt failed",
      );
    } else {
      log.debug({ eventId: claim.id, latencyMs }, "webhook delivered");
    }
  }

  /**
   * The event's state after an attempt. A 2xx is delivered; an interruption
   * is due again at once, without counting as an attempt; anything else is
   * retried with back-off until the retry window ends (FAILED).
   */
  private nextState(
    claim: Claim,
    outcome: Outcome,
    startedAt: Date,
  ): Pick<
    AttemptRecord,
    "status" | "firstAttemptAt" | "attemptCount" | "nextAttemptAt" | "deliveredAt" | "wake"
  > {
    const { config } = this.options;
    const now = realTime.now();
    const firstAttemptAt = claim.firstAttemptAt ?? startedAt;
    const wake = {
      platformId: claim.platformId,
      objectId: claim.objectId,
      seq: claim.seq,
      at: now,
    };
    if (outcome.kind === "interrupted") {
      return {
        status: "PENDING",
        firstAttemptAt,
        attemptCount: claim.attemptCount,
        nextAttemptAt: now,
      };
    }
    const attemptCount = claim.attemptCount + 1;
    if (outcome.kind === "response" && outcome.httpStatus >= 200 && outcome.httpStatus < 300) {
      return { status: "DELIVERED", firstAttemptAt, attemptCount, deliveredAt: now, wake };
    }
    if (retryWindowOver(firstAttemptAt, now, config.maxAgeMs)) {
      return { status: "FAILED", firstAttemptAt, attemptCount, wake };
    }
    return {
      status: "PENDING",
      firstAttemptAt,
      attemptCount,
      nextAttemptAt: new Date(now.getTime() + retryDelayMs(attemptCount, config)),
    };
  }

  /**
   * Records an attempt together with the others that finish about the same
   * time: one transaction (on SQLite, one commit shared with the API's
   * writes) for many deliveries. Resolves once it is committed.
   */
  private record(record: AttemptRecord): Promise<void> {
    return new Promise((recorded, failed) => {
      if (this.unrecorded.push({ record, recorded, failed }) === 1) {
        setImmediate(() => void this.recordPending());
      }
    });
  }

  private async recordPending(): Promise<void> {
    const batch = this.unrecorded;
    this.unrecorded = [];
    try {
      await this.options.store.recordAttempts(batch.map((b) => b.record));
      for (const b of batch) b.recorded();
      // A finished event made its object's next event due: look for it now,
      // not at the next poll, or one busy object (an account's balance
      // events) would go at a poll's pace.
      if (batch.some((b) => b.record.wake !== undefined)) this.nudge();
    } catch (err) {
      for (const b of batch) b.failed(err);
    }
  }
}
