import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { systemClock, type Clock } from "../clock.js";
import type { WebhookConfig } from "../config.js";
import type { Logger } from "../logger.js";
import { onEventEmitted } from "./outbox.js";
import type { AttemptRecord, ClaimedEvent, OutboxStore } from "./outbox-store.js";
import { retryDelayMs, retryWindowOver } from "./retry.js";
import { DeliverySender, type SentAttempt } from "./delivery-sender.js";
import type { PostResult } from "./webhook-post.js";

// Delivers outbox events (see outbox.ts) to each platform's webhook URL.
//
// - Claims: an event is taken with a conditional update that sets a lease
//   (lockedUntil, lockedBy); only one process can win it, and a lease left
//   by a crashed process expires and the event is taken over. The lease
//   outlives the delivery timeout, so a live owner is never overtaken.
// - Order: an event is not attempted while an earlier PENDING event of the
//   same platform and object exists. A blocked event is put off until its
//   predecessor's next attempt (or lease end); finishing an event wakes its
//   successor. The events queued behind a claimed one are claimed with it
//   (a run) and sent back to back, each once the one before was delivered:
//   a busy object (an account's balance events) is not held to one event
//   per poll.
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
 * Most events of one object claimed and sent back to back (see ClaimedRun
 * in outbox-store.ts): one poll and one record for the lot. An object's
 * events go at most a run per poll and record, so a busy object (one
 * account's balance events, one per card authorization) needs long runs to
 * keep up: at 64 its deliveries fell seconds behind 2,500 authorizations a
 * second; at 512 they stay within a fifth of a second (bench/RESULTS.md).
 */
const RUN_LENGTH = 512;
/**
 * Due events read per platform beyond its free slots, so that a few found
 * blocked (not their object's turn) or taken by another process do not leave
 * slots empty until the next poll.
 */
const READ_AHEAD = 4;
/**
 * No event of a run starts later than this after the run began: its
 * attempts are then recorded, and the rest of the run goes to the next poll.
 * What a crash leaves delivered but unrecorded (sent again after a restart)
 * is at most what was sent in this window and in the few milliseconds
 * before a record commits (docs/webhooks.md).
 */
const RUN_WINDOW_MS = 250;

/** Its platform as read by the poll that claimed it: a URL change applies from the next attempt. */
interface Claim extends ClaimedEvent {
  token: string;
  leaseUntil: Date;
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
/**
 * This process among those that had its pid (a container restarted as pid
 * 1): every claim's owner carries it, so a restarted process tells its dead
 * predecessor's claims from those of a dispatcher beside it in this process.
 */
const PROCESS_TAG = randomUUID().slice(0, 8);

export class WebhookDispatcher {
  private readonly owner = `${hostname()}:${process.pid}:${PROCESS_TAG}`;
  /** The leases of this host's dead processes were given back (at the first poll). */
  private recovered = false;
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
  /** Attempts (and claims given back) waiting to be recorded together (see record()). */
  private unrecorded: {
    records: AttemptRecord[];
    released: { id: string; token: string }[];
    recorded: () => void;
    failed: (e: unknown) => void;
  }[] = [];

  private readonly sender: DeliverySender;

  constructor(private readonly options: DispatcherOptions) {
    this.sender = new DeliverySender(options.config.timeoutMs);
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
    this.sender.interrupt();
    await this.tickRunning;
    await Promise.allSettled(this.unsettled);
    await this.sender.close();
  }

  /**
   * One signed POST of an envelope, made as every delivery is: the
   * sandbox's synchronous test webhook, which keeps the receiver's answer.
   */
  async send(
    url: string,
    payload: string,
    privateKeyHex: string,
  ): Promise<{ outcome: Outcome; latencyMs: number }> {
    const [attempt] = await this.sender.send({
      url,
      privateKeyHex,
      payloads: [payload],
      startBefore: Number.POSITIVE_INFINITY,
      keepBody: true,
    });
    return { outcome: attempt!.outcome, latencyMs: attempt!.latencyMs };
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
    if (!this.recovered) await this.releaseAbandoned();
    const now = realTime.now();
    const token = `${this.owner}:${randomUUID()}`;
    const leaseUntil = new Date(now.getTime() + config.leaseMs);
    const { claimed, mayBeMore } = await store.poll({
      now,
      leaseUntil,
      token,
      free,
      platformCap: config.platformConcurrency,
      inFlight: this.inFlightPerPlatform(),
      readAhead: READ_AHEAD,
      runLength: RUN_LENGTH,
    });
    for (const run of claimed) {
      this.startDelivery(run.map((event) => ({ ...event, token, leaseUntil })));
    }
    return mayBeMore && this.inFlight.size < config.concurrency;
  }

  /**
   * Before the first poll: the events a crashed process of this host left
   * leased go back at once (a restart after SIGKILL), not when the lease
   * runs out. Retried at the next poll if it fails.
   */
  private async releaseAbandoned(): Promise<void> {
    const released = await this.options.store.releaseAbandoned({
      now: realTime.now(),
      self: { host: hostname(), pid: process.pid, owner: this.owner },
    });
    this.recovered = true;
    if (released > 0) {
      this.options.log.warn({ released }, "webhook deliveries of a stopped process taken over");
    }
  }

  private inFlightPerPlatform(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const platformId of this.inFlight.values()) {
      counts[platformId] = (counts[platformId] ?? 0) + 1;
    }
    return counts;
  }

  /** A run takes one slot, the first event's, until its last request is answered. */
  private startDelivery(run: Claim[]): void {
    const head = run[0]!;
    this.inFlight.set(head.id, head.platformId);
    const done = this.deliverRun(run)
      .catch((err: unknown) => {
        // The lease expires and another poll retries; nothing is lost.
        this.options.log.error({ err, eventId: head.id }, "webhook delivery bookkeeping failed");
      })
      .finally(() => {
        this.freeSlot(head.id);
        this.unsettled.delete(done);
      });
    this.unsettled.add(done);
  }

  /**
   * Sends a run's events in order, each once the one before it was
   * delivered, and records them together. After a failure, or when the lease
   * could run out before another attempt ends, the rest go back untouched:
   * they wait behind the failed event, as if claimed one by one.
   */
  private async deliverRun(run: Claim[]): Promise<void> {
    const head = run[0]!;
    const { platform } = head;
    let attempts: SentAttempt[] = [];
    if (!this.stopped) {
      attempts = await this.sender.send({
        url: platform.webhookUrl,
        privateKeyHex: platform.webhookPrivateKey,
        payloads: run.map((claim) => claim.payload),
        startBefore: Math.min(
          head.leaseUntil.getTime() - this.options.config.timeoutMs,
          Date.now() + RUN_WINDOW_MS,
        ),
        keepBody: false,
      });
    }
    this.freeSlot(head.id);
    const records = attempts.map((attempt, i) => this.attemptRecord(run[i]!, attempt));
    const released = run.slice(attempts.length).map(({ id, token }) => ({ id, token }));
    await this.record(records, released);
  }

  /**
   * Once the receiver has answered, the slot goes to the next run: the
   * attempts are still to be recorded, but their events stay leased until
   * they are, so no poll can take them (nor, while pending, their successors).
   */
  private freeSlot(eventId: string): void {
    if (!this.inFlight.delete(eventId)) return;
    // Soon, not at once: the slots that free up meanwhile are refilled by
    // the same poll.
    this.schedule(NUDGE_DELAY_MS);
  }

  /** One attempt at one event: its outcome logged, its record to write. */
  private attemptRecord(claim: Claim, sent: SentAttempt): AttemptRecord {
    const { clock, log } = this.options;
    const { outcome, latencyMs } = sent;
    // Attempt times are API times: the server's clock (which tests may set)
    // plus the platform's sandbox offset, at the moment the request started.
    const attemptedAt = new Date(
      clock.now().getTime() -
        (realTime.now().getTime() - sent.startedAt) +
        claim.platform.clockOffsetSeconds * 1000,
    );

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

    return {
      ...this.nextState(claim, outcome, new Date(sent.startedAt), new Date(sent.endedAt)),
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
    };
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
    now: Date,
  ): Pick<
    AttemptRecord,
    "status" | "firstAttemptAt" | "attemptCount" | "nextAttemptAt" | "deliveredAt" | "wake"
  > {
    const { config } = this.options;
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
  private record(
    records: AttemptRecord[],
    released: { id: string; token: string }[],
  ): Promise<void> {
    return new Promise((recorded, failed) => {
      if (this.unrecorded.push({ records, released, recorded, failed }) === 1) {
        setImmediate(() => void this.recordPending());
      }
    });
  }

  private async recordPending(): Promise<void> {
    const batch = this.unrecorded;
    this.unrecorded = [];
    try {
      await this.options.store.recordAttempts(
        batch.flatMap((b) => b.records),
        batch.flatMap((b) => b.released),
      );
      for (const b of batch) b.recorded();
      // A finished event made its object's next event due: look for it now,
      // not at the next poll, or one busy object (an account's balance
      // events) would go at a poll's pace.
      if (batch.some((b) => b.records.some((r) => r.wake !== undefined))) this.nudge();
    } catch (err) {
      for (const b of batch) b.failed(err);
    }
  }
}
