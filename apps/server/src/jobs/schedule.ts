import type { Tx } from "../db/client.js";
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

/**
 * Schedules a delayed outcome. Call it inside the transaction that creates
 * the state it will move on, so the outcome cannot be lost.
 */
export async function scheduleJob(tx: Tx, job: JobInput): Promise<string> {
  const id = newId("Job");
  await tx.job.create({
    data: {
      id,
      platformId: job.platformId,
      kind: job.kind,
      payload: JSON.stringify(job.payload),
      dueAt: new Date(job.now.getTime() + job.delaySeconds * 1000),
      status: "PENDING",
      createdAt: job.now,
      updatedAt: job.now,
    },
  });
  return id;
}
