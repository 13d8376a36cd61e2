import type { Schemas } from "@payments-sandbox/client";
import type { RequestContext, Services } from "../../http/context.js";
import type { JobWorker } from "../../jobs/worker.js";
import { advanceWebhookRetries } from "../../events/retry.js";
import { all, q, run } from "../../db/query.js";

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
    // Every API token belongs to a platform, so the row exists.
    const offsetSeconds =
      (
        await this.services.data.one(
          q.selectFrom("Platform").select("clockOffsetSeconds").where("id", "=", ctx.platformId),
        )
      )?.clockOffsetSeconds ?? 0;
    return {
      now: new Date(this.services.clock.now().getTime() + offsetSeconds * 1000).toISOString(),
      offsetSeconds,
    };
  }

  async advance(ctx: RequestContext, seconds: number): Promise<SandboxClockAdvanceResult> {
    const shiftMs = seconds * 1000;
    const now = this.services.clock.now();
    // The jobs this move makes due: counted once applied, whichever worker
    // (this request, this process's poller, another process) applies them.
    const becameDue = await this.services.data.transaction(function* () {
      yield* run(
        q
          .updateTable("Platform")
          .set((eb) => ({ clockOffsetSeconds: eb("clockOffsetSeconds", "+", seconds) }))
          .where("id", "=", ctx.platformId),
      );
      const pending = yield* all(
        q
          .selectFrom("Job")
          .select(["id", "dueAt"])
          .where("platformId", "=", ctx.platformId)
          .where("status", "=", "PENDING"),
      );
      const due: string[] = [];
      for (const job of pending) {
        const dueAt = new Date(job.dueAt.getTime() - shiftMs);
        yield* run(q.updateTable("Job").set({ dueAt }).where("id", "=", job.id));
        if (dueAt.getTime() <= now.getTime()) due.push(job.id);
      }
      // Webhook retries wait on the same clock.
      yield* advanceWebhookRetries(ctx.platformId, shiftMs);
      return due;
    });
    // Waits for due jobs another worker claimed first, too: when this answers,
    // every outcome that became due has happened.
    const ranHere = await this.worker.settlePlatform(ctx.platformId);
    const applied =
      becameDue.length === 0
        ? []
        : await this.services.data.all(
            q
              .selectFrom("Job")
              .select("id")
              .where("id", "in", becameDue)
              .where("status", "not in", ["PENDING", "RUNNING"]),
          );
    // Those, and what they scheduled as due that this request ran itself.
    const jobsRun = new Set([...applied.map((j) => j.id), ...ranHere]).size;
    const clock = await this.get(ctx);
    return { ...clock, jobsRun };
  }
}
