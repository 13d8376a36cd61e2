import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import type { Clock } from "../clock.js";
import type { Config } from "../config.js";
import type { Database } from "../db/database.js";
import type { ExpressionBuilder } from "kysely";
import { countOf, q, type Row } from "../db/query.js";
import type { Tables } from "../db/tables.js";
import type { Logger } from "../logger.js";
import type { PlatformClocks } from "../platform/platform-clock.js";
import type { DueJob, JobHandlers } from "./registry.js";

type JobRow = Row<"Job">;

export interface JobWorkerOptions {
  /** How often the worker looks for due jobs. */
  pollMs: number;
  /** How long a claim holds before another process may take the job over. */
  leaseMs: number;
  /** First retry delay; doubles per attempt (with jitter). */
  retryBaseMs: number;
  /** After this many failed attempts the job is given up as FAILED. */
  maxAttempts: number;
  /** Jobs claimed per poll. */
  batchSize: number;
}

export const defaultJobWorkerOptions: JobWorkerOptions = {
  pollMs: 250,
  leaseMs: 60_000,
  retryBaseMs: 1_000,
  maxAttempts: 10,
  batchSize: 20,
};

/** The defaults, with the poll interval and first retry delay the configuration sets. */
export function jobWorkerOptionsOf(
  config: Pick<Config, "jobPollMs" | "jobRetryBaseMs">,
): JobWorkerOptions {
  return {
    ...defaultJobWorkerOptions,
    pollMs: config.jobPollMs,
    retryBaseMs: config.jobRetryBaseMs,
  };
}

/**
 * Runs delayed outcomes. A job is claimed by a conditional update (status and
 * lease checked in the WHERE clause), so on one PostgreSQL database several
 * server processes never run the same job at once; a crashed process's lease
 * runs out and the job is taken over. Jobs are rows, so they survive restarts.
 */
export class JobWorker {
  readonly workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;

  constructor(
    private readonly data: Database,
    private readonly clock: Clock,
    private readonly clocks: PlatformClocks,
    private readonly handlers: JobHandlers,
    private readonly log: Logger,
    private readonly options: JobWorkerOptions = defaultJobWorkerOptions,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pollOnce()
        .then(() => undefined)
        .catch((err: unknown) => this.log.error({ err }, "job poll failed"))
        .finally(() => this.schedule(this.options.pollMs));
    }, delay);
  }

  /** One poll: claim what is due (any platform) and run it in due order. */
  async pollOnce(): Promise<number> {
    const claimed = await this.claimDue(undefined, this.options.batchSize);
    for (const job of claimed) await this.run(job);
    return claimed.length;
  }

  /**
   * Runs every job of one platform that is due now, in due order, including
   * jobs that those jobs schedule and that are already due. Used by the
   * sandbox clock so an advance answers only after its outcomes happened.
   */
  async runDueForPlatform(platformId: string, limit = 10_000): Promise<number> {
    return (await this.runDueJobs(platformId, limit)).length;
  }

  /** The ids of the due jobs this call claimed and ran. */
  private async runDueJobs(platformId: string, limit = 10_000): Promise<string[]> {
    const ran: string[] = [];
    while (ran.length < limit) {
      const claimed = await this.claimDue(platformId, Math.min(100, limit - ran.length));
      if (claimed.length === 0) break;
      for (const job of claimed) {
        await this.run(job);
        ran.push(job.id);
      }
    }
    return ran;
  }

  /**
   * Like runDueForPlatform, but also waits for the platform's due jobs that
   * another worker (this process's poller, or another process) claimed
   * first, and runs what they schedule as due, so that when it returns every
   * job due now has been applied. Returns the ids of the jobs this call ran itself.
   */
  async settlePlatform(platformId: string, timeoutMs = 30_000): Promise<Set<string>> {
    const deadline = Date.now() + timeoutMs;
    const ran = new Set<string>();
    for (;;) {
      for (const id of await this.runDueJobs(platformId)) ran.add(id);
      const now = this.clock.now();
      const count = q
        .selectFrom("Job")
        .select((eb) => eb.fn.countAll().as("count"))
        .where("platformId", "=", platformId)
        .where("dueAt", "<=", now);
      const [running, due] = await Promise.all([
        this.data
          .one(count.where("status", "=", "RUNNING").where("lockedUntil", ">=", now))
          .then(countOf),
        this.data.one(count.where("status", "=", "PENDING")).then(countOf),
      ]);
      if ((running === 0 && due === 0) || Date.now() > deadline) return ran;
      if (running > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  private async claimDue(platformId: string | undefined, max: number): Promise<JobRow[]> {
    const now = this.clock.now();
    let due = q.selectFrom("Job").select("id").where(claimable(now));
    if (platformId) due = due.where("platformId", "=", platformId);
    const candidates = await this.data.all(
      due.orderBy("dueAt").orderBy("createdAt").orderBy("id").limit(max),
    );
    if (candidates.length === 0) return [];
    // One statement claims the whole batch, under a tag of this claim, so two
    // claimers (this process's poller and a clock advance, say) never split
    // a batch between them: whoever wins runs all of it, in due order.
    const lockedBy = `${this.workerId}:${randomUUID().slice(0, 8)}`;
    const claimed = await this.data.execute(
      q
        .updateTable("Job")
        .set((eb) => ({
          status: "RUNNING",
          lockedBy,
          lockedUntil: new Date(now.getTime() + this.options.leaseMs),
          attempts: eb("attempts", "+", 1),
          updatedAt: now,
        }))
        .where(
          "id",
          "in",
          candidates.map((c) => c.id),
        )
        .where(claimable(now)),
    );
    if (claimed === 0) return [];
    return this.data.all(
      q
        .selectFrom("Job")
        .selectAll()
        .where("lockedBy", "=", lockedBy)
        .orderBy("dueAt")
        .orderBy("createdAt")
        .orderBy("id"),
    );
  }

  private async run(job: JobRow): Promise<void> {
    const handler = this.handlers.get(job.kind);
    const log = this.log.child({ jobId: job.id, kind: job.kind, platformId: job.platformId });
    try {
      if (!handler) throw new Error(`no handler registered for job kind ${job.kind}`);
      const due: DueJob = {
        id: job.id,
        platformId: job.platformId,
        kind: job.kind,
        payload: JSON.parse(job.payload) as unknown,
        attempts: job.attempts,
        dueAt: job.dueAt,
      };
      await handler(due, {
        data: this.data,
        clock: await this.clocks.forPlatform(job.platformId),
        log,
      });
      await this.data.execute(
        q
          .updateTable("Job")
          .set({
            status: "DONE",
            lockedBy: null,
            lockedUntil: null,
            lastError: null,
            updatedAt: this.clock.now(),
          })
          .where("id", "=", job.id)
          .where("lockedBy", "=", job.lockedBy),
      );
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const giveUp = !handler || job.attempts >= this.options.maxAttempts;
      const backoff = this.options.retryBaseMs * 2 ** (job.attempts - 1);
      const jitter = Math.random() * backoff * 0.2;
      const now = this.clock.now();
      log.warn({ err, attempts: job.attempts, giveUp }, "job failed");
      await this.data.execute(
        q
          .updateTable("Job")
          .set({
            status: giveUp ? "FAILED" : "PENDING",
            dueAt: giveUp ? job.dueAt : new Date(now.getTime() + backoff + jitter),
            lastError: message.slice(0, 1000),
            lockedBy: null,
            lockedUntil: null,
            updatedAt: now,
          })
          .where("id", "=", job.id)
          .where("lockedBy", "=", job.lockedBy),
      );
    }
  }
}

/** A job that may be claimed now: due, or running under a lease that ran out. */
function claimable(now: Date) {
  return (eb: ExpressionBuilder<Tables, "Job">) =>
    eb.or([
      eb.and([eb("status", "=", "PENDING"), eb("dueAt", "<=", now)]),
      eb.and([eb("status", "=", "RUNNING"), eb("lockedUntil", "<", now)]),
    ]);
}
