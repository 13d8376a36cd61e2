import { insert } from "../db/query.js";
import type { SqlProgram } from "../db/sql.js";
import { newId } from "../ids.js";

export interface JobInput {
  platformId: string;
  /** Names a handler registered with the job worker. */
  kind: string;
  payload: unknown;
  /** How long after now (in sandbox time) the job is due. */
  delaySeconds: number;
  /** Real time now; the due time is stored in real time. */
  now: Date;
}

/** The row of a scheduled job (shared by scheduleJob and the SQL hot paths). */
export function jobRow(job: JobInput) {
  return {
    id: newId("Job"),
    platformId: job.platformId,
    kind: job.kind,
    payload: JSON.stringify(job.payload),
    dueAt: new Date(job.now.getTime() + job.delaySeconds * 1000),
    status: "PENDING",
    createdAt: job.now,
    updatedAt: job.now,
  };
}

/**
 * Schedules a delayed outcome. Call it inside the transaction that creates
 * the state it will move on, so the outcome cannot be lost.
 */
export function* scheduleJob(job: JobInput): SqlProgram<string> {
  const row = jobRow(job);
  yield* insert("Job", row);
  return row.id;
}
