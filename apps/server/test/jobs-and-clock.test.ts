import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import type { Database } from "../src/db/database.js";
import { countRows } from "./money-helpers.js";
import { q } from "../src/db/query.js";
import type { DueJob, JobHandlers } from "../src/jobs/registry.js";
import { scheduleJob } from "../src/jobs/schedule.js";
import { databases, freshDatabase, startSandbox, type TestSandbox } from "./harness.js";

// These tests exercise the job worker and the sandbox clock through test-only
// job kinds; the areas' own delayed outcomes have their own tests.

const sandboxes: TestSandbox[] = [];
afterEach(async () => {
  for (const s of sandboxes.splice(0).reverse()) await s.stop();
});

async function platformOf(sandbox: TestSandbox): Promise<string> {
  const token = await sandbox.server.data.one(
    q.selectFrom("ApiToken").select("platformId").where("id", "=", sandbox.credentials.tokenId),
  );
  if (!token) throw new Error("the sandbox's token is not stored");
  return token.platformId;
}

async function schedule(
  db: Database,
  platformId: string,
  kind: string,
  payload: unknown,
  delaySeconds: number,
  now = new Date(),
) {
  return db.transaction(() => scheduleJob({ platformId, kind, payload, delaySeconds, now }));
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("condition not met in time");
}

describe.each(databases)("job worker and sandbox clock on %s", (kind) => {
  it("advancing the clock fires exactly the jobs that became due, in due order", async () => {
    const ran: string[] = [];
    // A stopped real clock, so only the sandbox clock moves time here.
    const clock = new ManualClock();
    const sandbox = await startSandbox(kind, {
      clock,
      registerJobs: (h: JobHandlers) =>
        h.register(
          "test.record",
          async (job) => void ran.push((job.payload as { name: string }).name),
        ),
    });
    sandboxes.push(sandbox);
    const platformId = await platformOf(sandbox);
    const db = sandbox.server.data;
    // Scheduled out of order on purpose.
    await schedule(db, platformId, "test.record", { name: "c" }, 300, clock.now());
    await schedule(db, platformId, "test.record", { name: "a" }, 100, clock.now());
    await schedule(db, platformId, "test.record", { name: "b" }, 200, clock.now());

    const before = await sandbox.client.GET("/sandbox/clock");
    expect(before.data?.offsetSeconds).toBe(0);

    const first = await sandbox.client.POST("/sandbox/clock/advance", { body: { seconds: 250 } });
    expect(first.response.status).toBe(200);
    expect(first.data?.jobsRun).toBe(2);
    expect(ran).toEqual(["a", "b"]);
    expect(first.data?.offsetSeconds).toBe(250);
    expect(new Date(first.data!.now).getTime() - clock.now().getTime()).toBe(250_000);

    const second = await sandbox.client.POST("/sandbox/clock/advance", { body: { seconds: 49 } });
    expect(second.data?.jobsRun).toBe(0);
    const third = await sandbox.client.POST("/sandbox/clock/advance", { body: { seconds: 1 } });
    expect(third.data?.jobsRun).toBe(1);
    expect(ran).toEqual(["a", "b", "c"]);
    const after = await sandbox.client.GET("/sandbox/clock");
    expect(after.data?.offsetSeconds).toBe(300);
  });

  it("keeps each platform's clock its own", async () => {
    const sandbox = await startSandbox(kind);
    sandboxes.push(sandbox);
    const other = await sandbox.otherPlatformClient();
    await sandbox.client.POST("/sandbox/clock/advance", { body: { seconds: 600 } });
    expect((await other.GET("/sandbox/clock")).data?.offsetSeconds).toBe(0);
    // A customer created after the advance carries the platform's sandbox time.
    const { data } = await sandbox.client.POST("/customers", {
      body: {
        customerType: "INDIVIDUAL",
        fullName: "T Ime",
        email: "t@example.com",
      },
    });
    expect(new Date(data!.createdAt!).getTime() - Date.now()).toBeGreaterThan(590_000);
  });

  it("chains follow-ups from the due time, so chained delays add up exactly", async () => {
    const ran: string[] = [];
    const clock = new ManualClock();
    const sandbox = await startSandbox(kind, {
      clock,
      registerJobs: (h) => {
        h.register("test.first", async (job, tools) => {
          ran.push("first");
          await tools.data.transaction(() =>
            scheduleJob({
              platformId: job.platformId,
              kind: "test.second",
              payload: {},
              delaySeconds: 60,
              now: job.dueAt,
            }),
          );
        });
        h.register("test.second", async () => void ran.push("second"));
      },
    });
    sandboxes.push(sandbox);
    await schedule(
      sandbox.server.data,
      await platformOf(sandbox),
      "test.first",
      {},
      360,
      clock.now(),
    );
    const a = await sandbox.client.POST("/sandbox/clock/advance", { body: { seconds: 400 } });
    expect(a.data?.jobsRun).toBe(1);
    expect(ran).toEqual(["first"]);
    const early = await sandbox.client.POST("/sandbox/clock/advance", { body: { seconds: 19 } });
    expect(early.data?.jobsRun).toBe(0);
    const b = await sandbox.client.POST("/sandbox/clock/advance", { body: { seconds: 1 } });
    expect(b.data?.jobsRun).toBe(1);
    expect(ran).toEqual(["first", "second"]);
  });

  it("runs a due job in real time with no call at all", async () => {
    const ran: string[] = [];
    const sandbox = await startSandbox(kind, {
      env: { JOB_POLL_MS: "50" },
      registerJobs: (h) => h.register("test.record", async () => void ran.push("x")),
    });
    sandboxes.push(sandbox);
    await schedule(sandbox.server.data, await platformOf(sandbox), "test.record", {}, 1);
    expect(ran).toEqual([]);
    await waitFor(async () => ran.length === 1);
    // The worker marks the job DONE just after its handler returns.
    await waitFor(
      async () =>
        (await sandbox.server.data.one(q.selectFrom("Job").select("status")))?.status === "DONE",
    );
    expect(ran).toEqual(["x"]);
  });

  it("retries a failing job with back-off and records the last error", async () => {
    let calls = 0;
    const sandbox = await startSandbox(kind, {
      env: { JOB_POLL_MS: "20", JOB_RETRY_BASE_MS: "50" },
      registerJobs: (h) =>
        h.register("test.flaky", async () => {
          calls += 1;
          if (calls < 3) throw new Error(`boom ${calls}`);
        }),
    });
    sandboxes.push(sandbox);
    const id = await schedule(sandbox.server.data, await platformOf(sandbox), "test.flaky", {}, 0);
    await waitFor(
      async () =>
        (await sandbox.server.data.one(q.selectFrom("Job").selectAll().where("id", "=", id)))
          ?.status === "DONE",
    );
    const job = await sandbox.server.data.one(q.selectFrom("Job").selectAll().where("id", "=", id));
    expect(calls).toBe(3);
    expect(job?.attempts).toBe(3);
  });

  it("loses no job across a restart", async () => {
    const database = await freshDatabase(kind);
    try {
      const first = await startSandbox(kind, { databaseUrl: database.url });
      const platformId = await platformOf(first);
      await schedule(first.server.data, platformId, "test.record", { name: "survivor" }, 2);
      await first.stop();

      const ran: string[] = [];
      const second = await startSandbox(kind, {
        databaseUrl: database.url,
        env: { JOB_POLL_MS: "50" },
        registerJobs: (h) =>
          h.register(
            "test.record",
            async (job) => void ran.push((job.payload as { name: string }).name),
          ),
      });
      sandboxes.push(second);
      await waitFor(async () => ran.length === 1);
      expect(ran).toEqual(["survivor"]);
    } finally {
      for (const s of sandboxes.splice(0)) await s.stop();
      await database.drop();
    }
  });
});

describe.runIf(databases.includes("postgresql"))("two servers on one PostgreSQL database", () => {
  it("never run one job twice", async () => {
    const database = await freshDatabase("postgresql");
    const runs: { job: string; server: number }[] = [];
    const handler = (server: number) => async (job: DueJob) => {
      runs.push({ job: job.id, server });
      // A little work, so the two workers overlap.
      await new Promise((r) => setTimeout(r, 2));
    };
    try {
      const a = await startSandbox("postgresql", {
        databaseUrl: database.url,
        env: { JOB_POLL_MS: "10" },
        registerJobs: (h) => h.register("test.count", handler(1)),
      });
      sandboxes.push(a);
      const b = await startSandbox("postgresql", {
        databaseUrl: database.url,
        env: { JOB_POLL_MS: "10" },
        registerJobs: (h) => h.register("test.count", handler(2)),
      });
      sandboxes.push(b);
      const platformId = await platformOf(a);
      const due = new Date(Date.now() + 1500);
      await a.server.data.transaction(function* () {
        for (let i = 0; i < 200; i++) {
          yield* scheduleJob({
            platformId,
            kind: "test.count",
            payload: { i },
            delaySeconds: 0,
            now: due,
          });
        }
      });
      await waitFor(
        async () =>
          (await countRows(a.server.data, q.selectFrom("Job").where("status", "=", "DONE"))) ===
          200,
        30_000,
      );
      const ids = runs.map((r) => r.job);
      expect(ids).toHaveLength(200);
      expect(new Set(ids).size).toBe(200);
      // Both processes took part, so the claim was really contended.
      expect(new Set(runs.map((r) => r.server)).size).toBe(2);
    } finally {
      for (const s of sandboxes.splice(0)) await s.stop();
      await database.drop();
    }
  });
});
