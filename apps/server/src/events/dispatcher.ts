import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { performance } from "node:perf_hooks";
import { webhookSignature } from "./webhook-signer.js";
import { systemClock, type Clock } from "../clock.js";
import type { WebhookConfig } from "../config.js";
import type { Db, Tx } from "../db/client.js";
import type { Logger } from "../logger.js";
import { onEventEmitted } from "./outbox.js";
import { retryDelayMs, retryWindowOver } from "./retry.js";

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

const NUDGE_DELAY_MS = 5;
const MAX_ERROR_LENGTH = 500;

interface Claim {
  id: string;
  platformId: string;
  objectId: string;
  seq: bigint;
  payload: string;
  attemptCount: number;
  replayCount: number;
  firstAttemptAt: Date | null;
  token: string;
  /** Read when claimed, so a URL change applies from the next attempt. */
  platform:
    | {
        webhookUrl: string | null;
        webhookPrivateKey: string;
        clockOffsetSeconds: number;
      }
    | undefined;
}

interface Candidate {
  id: string;
  platformId: string;
  objectId: string;
  seq: bigint;
  nextAttemptAt: Date;
}

type Outcome =
  | { kind: "response"; httpStatus: number }
  | { kind: "error"; error: string }
  | { kind: "interrupted"; error: string };

export interface DispatcherOptions {
  db: Db;
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
  private readonly inFlight = new Map<string, { platformId: string; done: Promise<void> }>();
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private timerDue = Number.POSITIVE_INFINITY;
  private tickRunning: Promise<void> | undefined;
  private tickAgain = false;
  private started = false;
  private stopped = false;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly options: DispatcherOptions) {}

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
    this.stopping.abort();
    await this.tickRunning;
    await Promise.allSettled([...this.inFlight.values()].map((d) => d.done));
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
    const { db, config } = this.options;
    // Platforms that reached their cap are left out of the query, so events
    // of other platforms are found even behind a long backlog of theirs.
    for (let round = 0; round < 4; round++) {
      const free = config.concurrency - this.inFlight.size;
      if (free <= 0 || this.stopped) return false;
      const perPlatform = this.inFlightPerPlatform();
      const saturated = [...perPlatform].filter(([, n]) => n >= config.platformConcurrency);
      const platforms = await db.platform.findMany({
        where: {
          webhookUrl: { not: null },
          ...(saturated.length > 0 ? { id: { notIn: saturated.map(([id]) => id) } } : {}),
        },
        select: { id: true },
      });
      if (platforms.length === 0) return false;

      const now = realTime.now();
      const candidates: Candidate[] = await db.webhookEvent.findMany({
        where: {
          status: "PENDING",
          nextAttemptAt: { lte: now },
          OR: [{ lockedUntil: null }, { lockedUntil: { lt: now } }],
          platformId: { in: platforms.map((p) => p.id) },
        },
        orderBy: [{ seq: "asc" }],
        take: free * 4,
        select: { id: true, platformId: true, objectId: true, seq: true, nextAttemptAt: true },
      });
      if (candidates.length === 0) return false;

      const heads = await this.eligible(candidates, now);
      const chosen: Candidate[] = [];
      let skippedForCap = false;
      for (const candidate of heads) {
        if (chosen.length >= free) break;
        const count = perPlatform.get(candidate.platformId) ?? 0;
        if (count >= config.platformConcurrency) {
          skippedForCap = true;
          continue;
        }
        perPlatform.set(candidate.platformId, count + 1);
        chosen.push(candidate);
      }
      for (const claim of await this.claim(chosen, now)) this.startDelivery(claim);
      if (!skippedForCap) {
        return candidates.length === free * 4 && this.inFlight.size < config.concurrency;
      }
    }
    return false;
  }

  private inFlightPerPlatform(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { platformId } of this.inFlight.values()) {
      counts.set(platformId, (counts.get(platformId) ?? 0) + 1);
    }
    return counts;
  }

  /**
   * The candidates that are first in line for their object. The others are
   * put off until their predecessor can next finish, so they do not fill
   * every poll.
   */
  private async eligible(candidates: Candidate[], now: Date): Promise<Candidate[]> {
    const { db } = this.options;
    const firstPending = await db.webhookEvent.groupBy({
      by: ["platformId", "objectId"],
      where: {
        status: "PENDING",
        OR: candidates.map((c) => ({ platformId: c.platformId, objectId: c.objectId })),
      },
      _min: { seq: true },
    });
    const key = (platformId: string, objectId: string) => `${platformId}\u0000${objectId}`;
    const headSeq = new Map(
      firstPending.map((g) => [key(g.platformId, g.objectId), g._min.seq ?? null]),
    );
    const ready: Candidate[] = [];
    const blocked: Candidate[] = [];
    for (const c of candidates) {
      const first = headSeq.get(key(c.platformId, c.objectId));
      if (first === undefined || first === null || first >= c.seq) ready.push(c);
      else blocked.push(c);
    }
    if (blocked.length === 0) return ready;

    const heads = await db.webhookEvent.findMany({
      where: {
        status: "PENDING",
        OR: blocked.map((c) => ({
          platformId: c.platformId,
          objectId: c.objectId,
          seq: headSeq.get(key(c.platformId, c.objectId)) ?? 0n,
        })),
      },
      select: { platformId: true, objectId: true, nextAttemptAt: true, lockedUntil: true },
    });
    const headByObject = new Map(heads.map((h) => [key(h.platformId, h.objectId), h]));
    for (const c of blocked) {
      const head = headByObject.get(key(c.platformId, c.objectId));
      if (!head) continue;
      const until = Math.max(head.nextAttemptAt.getTime(), head.lockedUntil?.getTime() ?? 0);
      if (until <= now.getTime()) continue;
      // Optimistic: if the predecessor finished since this event was read,
      // its wake changed nextAttemptAt and the put-off does not apply.
      await db.webhookEvent.updateMany({
        where: { id: c.id, status: "PENDING", nextAttemptAt: c.nextAttemptAt },
        data: { nextAttemptAt: new Date(until) },
      });
    }
    return ready;
  }

  /**
   * Takes the candidates that no other process holds, in one conditional
   * update: a row whose lease is live does not match, so of two processes
   * racing for an event exactly one gets it. The batch token, stored as
   * lockedBy, says which rows were won and fences every later write.
   */
  private async claim(candidates: Candidate[], now: Date): Promise<Claim[]> {
    if (candidates.length === 0 || this.stopped) return [];
    const { db, config } = this.options;
    const token = `${this.owner}:${randomUUID()}`;
    const ids = candidates.map((c) => c.id);
    const { count } = await db.webhookEvent.updateMany({
      where: {
        id: { in: ids },
        status: "PENDING",
        nextAttemptAt: { lte: now },
        OR: [{ lockedUntil: null }, { lockedUntil: { lt: now } }],
      },
      data: { lockedUntil: new Date(now.getTime() + config.leaseMs), lockedBy: token },
    });
    if (count === 0) return [];
    const rows = await db.webhookEvent.findMany({
      where: { id: { in: ids }, lockedBy: token },
      orderBy: { seq: "asc" },
      select: {
        id: true,
        platformId: true,
        objectId: true,
        seq: true,
        payload: true,
        attemptCount: true,
        replayCount: true,
        firstAttemptAt: true,
      },
    });
    const platforms = await db.platform.findMany({
      where: { id: { in: [...new Set(rows.map((r) => r.platformId))] } },
      select: { id: true, webhookUrl: true, webhookPrivateKey: true, clockOffsetSeconds: true },
    });
    const byId = new Map(platforms.map((p) => [p.id, p]));
    return rows.map((row) => ({ ...row, token, platform: byId.get(row.platformId) }));
  }

  private startDelivery(claim: Claim): void {
    const done = this.deliver(claim)
      .catch((err: unknown) => {
        // The lease expires and another poll retries; nothing is lost.
        this.options.log.error({ err, eventId: claim.id }, "webhook delivery bookkeeping failed");
      })
      .finally(() => {
        this.inFlight.delete(claim.id);
        this.schedule(0);
      });
    this.inFlight.set(claim.id, { platformId: claim.platformId, done });
  }

  private async deliver(claim: Claim): Promise<void> {
    const { db, clock, log } = this.options;
    const { platform } = claim;
    if (!platform?.webhookUrl || this.stopped) {
      // URL removed since the poll (or shutting down): give the event back
      // untouched; it waits for a URL.
      await this.release(claim);
      return;
    }

    const signature = webhookSignature(claim.payload, platform.webhookPrivateKey);
    const startedAt = realTime.now();
    const attemptedAt = new Date(clock.now().getTime() + platform.clockOffsetSeconds * 1000);
    const started = performance.now();
    const outcome = await this.post(platform.webhookUrl, claim.payload, signature);
    const latencyMs = Math.max(0, Math.round(performance.now() - started));

    await db.$transaction(async (tx) => {
      await tx.webhookAttempt.create({
        data: {
          id: randomUUID(),
          eventId: claim.id,
          attemptedAt,
          httpStatus: outcome.kind === "response" ? outcome.httpStatus : null,
          latencyMs,
          error: outcome.kind === "response" ? null : outcome.error,
        },
      });
      await this.finish(tx, claim, outcome, startedAt);
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

  private async post(url: string, body: string, signature: string): Promise<Outcome> {
    const { timeoutMs } = this.options.config;
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      const res = await fetch(url, {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "X-Webhook-Signature": signature,
          "User-Agent": "payments-sandbox-webhooks/1",
        },
        body,
        // A redirect is the receiver's answer, not a place to send the event.
        redirect: "manual",
        signal: AbortSignal.any([timeout, this.stopping.signal]),
      });
      // Only the status matters; drop the body without waiting for it.
      await res.body?.cancel().catch(() => undefined);
      return { kind: "response", httpStatus: res.status };
    } catch (err) {
      if (this.stopping.signal.aborted && !timeout.aborted) {
        return { kind: "interrupted", error: "interrupted: the server was stopping" };
      }
      if (timeout.aborted) return { kind: "error", error: `timed out after ${timeoutMs} ms` };
      return { kind: "error", error: describeError(err) };
    }
  }

  /** Moves the event on after an attempt, fenced by the claim's lease token. */
  private async finish(tx: Tx, claim: Claim, outcome: Outcome, startedAt: Date): Promise<void> {
    const { config } = this.options;
    const now = realTime.now();
    const released = { lockedUntil: null, lockedBy: null };
    // A replay during the attempt bumped replayCount: it asked for a new
    // round, so this attempt must not close the event.
    const owned = { id: claim.id, lockedBy: claim.token, replayCount: claim.replayCount };
    const firstAttemptAt = claim.firstAttemptAt ?? startedAt;

    let finished = false;
    let result: { count: number };
    if (outcome.kind === "interrupted") {
      result = await tx.webhookEvent.updateMany({
        where: owned,
        data: { ...released, firstAttemptAt, nextAttemptAt: now },
      });
    } else if (
      outcome.kind === "response" &&
      outcome.httpStatus >= 200 &&
      outcome.httpStatus < 300
    ) {
      result = await tx.webhookEvent.updateMany({
        where: owned,
        data: {
          ...released,
          status: "DELIVERED",
          deliveredAt: now,
          firstAttemptAt,
          attemptCount: claim.attemptCount + 1,
        },
      });
      finished = true;
    } else {
      const attempts = claim.attemptCount + 1;
      const giveUp = retryWindowOver(firstAttemptAt, now, config.maxAgeMs);
      result = await tx.webhookEvent.updateMany({
        where: owned,
        data: giveUp
          ? { ...released, status: "FAILED", firstAttemptAt, attemptCount: attempts }
          : {
              ...released,
              firstAttemptAt,
              attemptCount: attempts,
              nextAttemptAt: new Date(now.getTime() + retryDelayMs(attempts, config)),
            },
      });
      finished = giveUp;
    }

    if (result.count === 0) {
      // Replayed meanwhile (or the lease was lost): just let go if it is ours.
      await tx.webhookEvent.updateMany({
        where: { id: claim.id, lockedBy: claim.token },
        data: released,
      });
      return;
    }
    if (finished) await this.wakeSuccessor(tx, claim, now);
  }

  /**
   * The next event of the same object may go now. The write always changes
   * its nextAttemptAt, which cancels a put-off computed from a stale view of
   * this event (see eligible()).
   */
  private async wakeSuccessor(tx: Tx, claim: Claim, now: Date): Promise<void> {
    const next = await tx.webhookEvent.findFirst({
      where: {
        platformId: claim.platformId,
        objectId: claim.objectId,
        status: "PENDING",
        seq: { gt: claim.seq },
      },
      orderBy: { seq: "asc" },
      select: { id: true, nextAttemptAt: true },
    });
    if (!next) return;
    const at = next.nextAttemptAt.getTime() === now.getTime() ? now.getTime() + 1 : now.getTime();
    await tx.webhookEvent.update({ where: { id: next.id }, data: { nextAttemptAt: new Date(at) } });
  }

  private async release(claim: Claim): Promise<void> {
    await this.options.db.webhookEvent.updateMany({
      where: { id: claim.id, lockedBy: claim.token },
      data: { lockedUntil: null, lockedBy: null },
    });
  }
}

function describeError(err: unknown): string {
  // fetch wraps the socket error in `cause`; that is the useful part.
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code =
    typeof cause === "object" && cause !== null && "code" in cause
      ? String((cause as { code: unknown }).code)
      : undefined;
  const message = cause instanceof Error ? cause.message : String(cause);
  const text = code && !message.includes(code) ? `${code}: ${message}` : message;
  return text.slice(0, MAX_ERROR_LENGTH);
}
