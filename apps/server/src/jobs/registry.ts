import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import type { Logger } from "../logger.js";

export interface DueJob {
  id: string;
  platformId: string;
  kind: string;
  payload: unknown;
  attempts: number;
  /**
   * When the job fell due (real time). A follow-up outcome is scheduled from
   * here (`scheduleJob(..., { now: job.dueAt })`), not from the moment the
   * job happened to run, so chained delays add up exactly under the sandbox clock.
   */
  dueAt: Date;
}

export interface JobTools {
  data: Database;
  /** The job's platform clock (sandbox time), for the timestamps it writes. */
  clock: Clock;
  log: Logger;
}

/**
 * Applies one delayed outcome. It runs its own transaction and must be
 * idempotent: after a crash it may run again (check the state it moves on).
 */
export type JobHandler = (job: DueJob, tools: JobTools) => Promise<void>;

export class JobHandlers {
  private readonly handlers = new Map<string, JobHandler>();

  register(kind: string, handler: JobHandler): void {
    if (this.handlers.has(kind)) throw new Error(`job kind ${kind} registered twice`);
    this.handlers.set(kind, handler);
  }

  get(kind: string): JobHandler | undefined {
    return this.handlers.get(kind);
  }
}
