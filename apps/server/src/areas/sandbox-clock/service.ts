import type { Schemas } from "@sandbox/client";
import type { RequestContext, Services } from "../../http/context.js";
import type { JobWorker } from "../../jobs/worker.js";

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
    await this.services.db.$transaction(async (tx) => {
      await tx.platform.update({
        where: { id: ctx.platformId },
        data: { clockOffsetSeconds: { increment: seconds } },
      });
      const pending = await tx.job.findMany({
        where: { platformId: ctx.platformId, status: "PENDING" },
        select: { id: true, dueAt: true },
      });
      for (const job of pending) {
        await tx.job.update({
          where: { id: job.id },
          data: { dueAt: new Date(job.dueAt.getTime() - shiftMs) },
        });
      }
    });
    const ran = await this.worker.runDueForPlatform(ctx.platformId);
    // Some may have been claimed by the background poll (or another process)
    // between the shift and the run above: answer only once they are done too.
    const jobsRun = ran + (await this.worker.settlePlatform(ctx.platformId));
    const clock = await this.get(ctx);
    return { ...clock, jobsRun };
  }
}
