import type { Schemas } from "@sandbox/client";
import type { RequestContext, Services } from "../../http/context.js";
import type { JobWorker } from "../../jobs/worker.js";
import { advanceWebhookRetries } from "../../events/retry.js";

type SandboxClock = Schemas["SandboxClock"];
type SandboxClockAdvanceResult = Schemas["SandboxClockAdvanceResult"];

/**
 * The per-platform sandbox clock. Advancing it adds to the platform's offset
 * and pulls the platform's pending jobs earlier by the same amount (jobs keep
 * real due times), then runs every job that became due before answering.
 */
export class SandboxClockService {
  constructor(
    private readonly services: Services,
    private readonly worker: JobWorker,
  ) {}

  async get(ctx: RequestContext): Promise<SandboxClock> {
    const platform = await this.services.db.platform.findUniqueOrThrow({
      where: { id: ctx.platformId },
      select: { clockOffsetSeconds: true },
    });
    return {
      now: new Date(
        this.services.clock.now().getTime() + platform.clockOffsetSeconds * 1000,
      ).toISOString(),
      offsetSeconds: platform.clockOffsetSeconds,
    };
  }

  async advance(ctx: RequestContext, seconds: number): Promise<SandboxClockAdvanceResult> {
    const shiftMs = seconds * 1000;
    const now = this.services.clock.now();
    // The jobs this move makes due: counted once applied, whichever worker
    // (this request, this process's poller, another process) applies them.
    const becameDue = await this.services.db.$transaction(async (tx) => {
      await tx.platform.update({
        where: { id: ctx.platformId },
        data: { clockOffsetSeconds: { increment: seconds } },
      });
      const pending = await tx.job.findMany({
        where: { platformId: ctx.platformId, status: "PENDING" },
        select: { id: true, dueAt: true },
      });
      const due: string[] = [];
      for (const job of pending) {
        const dueAt = new Date(job.dueAt.getTime() - shiftMs);
        await tx.job.update({ where: { id: job.id }, data: { dueAt } });
        if (dueAt.getTime() <= now.getTime()) due.push(job.id);
      }
      // Webhook retries wait on the same clock.
      await advanceWebhookRetries(tx, ctx.platformId, shiftMs);
      return due;
    });
    // Waits for due jobs another worker claimed first, too: when this answers,
    // every outcome that became due has happened.
    const ranHere = await this.worker.settlePlatform(ctx.platformId);
    const applied = await this.services.db.job.findMany({
      where: { id: { in: becameDue }, status: { notIn: ["PENDING", "RUNNING"] } },
      select: { id: true },
    });
    // Those, and what they scheduled as due that this request ran itself.
    const jobsRun = new Set([...applied.map((j) => j.id), ...ranHere]).size;
    const clock = await this.get(ctx);
    return { ...clock, jobsRun };
  }
}
