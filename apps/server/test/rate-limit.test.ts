import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Database } from "../src/db/database.js";
import { q, rowOf, updateOf } from "../src/db/query.js";
import { ApiError } from "../src/errors.js";
import { RateLimiter, type RateRule } from "../src/limits/rate-limit.js";
import { databases, migratedDatabase, type MigratedDatabase } from "./harness.js";

// The sliding-window limits of the auth legs, on each database: what a
// caller sees (how many attempts pass, the 429 and its Retry-After), and
// that attempts made at once through separate connection pools (as separate
// server processes would) never pass more than the limit.

const rule: RateRule = { name: "test-hits", limit: 3, windowSeconds: 60 };
const failures: RateRule = { name: "test-failures", limit: 2, windowSeconds: 900 };
const gate = { rule: failures, message: "too many failures" };

async function refusal(attempt: Promise<unknown>): Promise<ApiError> {
  const err = await attempt.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  const apiError = err as ApiError;
  expect(apiError.status).toBe(429);
  expect(apiError.code).toBe("RATE_LIMITED");
  return apiError;
}

const retryAfter = (err: ApiError) => Number(err.headers["Retry-After"]);

describe.each(databases)("rate limits on %s", (kind) => {
  let database: MigratedDatabase;
  let db: Database;
  let limiter: RateLimiter;
  beforeAll(async () => {
    database = await migratedDatabase(kind);
    db = Database.open(database.target);
    limiter = new RateLimiter(db);
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  const t0 = new Date("2026-01-01T00:00:00.000Z").getTime();
  const at = (seconds: number) => new Date(t0 + seconds * 1000);

  it("passes the limit's attempts in a window, refuses the next, and slides", async () => {
    await limiter.hit(rule, "s1", at(0), "slow down");
    await limiter.hit(rule, "s1", at(10), "slow down");
    await limiter.hit(rule, "s1", at(20), "slow down");
    const refused = await refusal(limiter.hit(rule, "s1", at(30), "slow down"));
    expect(refused.message).toBe("slow down");
    // The window frees a place when the event at 0 s leaves it, at 60 s.
    expect(retryAfter(refused)).toBe(30);
    // Still full just before; the refusals were not counted.
    await refusal(limiter.hit(rule, "s1", at(59.999), "slow down"));
    await limiter.hit(rule, "s1", at(60), "slow down");
    // The window now holds 10, 20 and 60 s: full until 70 s.
    expect(retryAfter(await refusal(limiter.hit(rule, "s1", at(65), "slow down")))).toBe(5);
    // Other subjects have windows of their own.
    await limiter.hit(rule, "s2", at(65), "slow down");
  });

  it("makes the attempt's writes only when the attempt is counted", async () => {
    await db.execute(q.insertInto("RateLimit").values({ key: "marker", times: "" }));
    const writes = (n: number) => ({
      inserts: [rowOf("RateLimit", { key: `written:${n}`, times: "" })],
      updates: [updateOf("RateLimit", { times: `update ${n}` }, { key: "marker" })],
    });
    for (let n = 1; n <= 3; n++) await limiter.hitWith(rule, "s3", at(n), "slow down", writes(n));
    await refusal(limiter.hitWith(rule, "s3", at(5), "slow down", writes(4)));
    const rows = await db.all(
      q
        .selectFrom("RateLimit")
        .select(["key", "times"])
        .where((eb) => eb.or([eb("key", "like", "written:%"), eb("key", "=", "marker")]))
        .orderBy("key"),
    );
    expect(rows).toEqual([
      { key: "marker", times: "update 3" },
      { key: "written:1", times: "" },
      { key: "written:2", times: "" },
      { key: "written:3", times: "" },
    ]);
  });

  it("with a claim, makes the writes only when the claim changes a row, once", async () => {
    const wide: RateRule = { name: "test-claims", limit: 8, windowSeconds: 60 };
    await db.execute(
      q.insertInto("RateLimit").values([
        { key: "code", times: "unused" },
        { key: "claimer", times: "" },
      ]),
    );
    const other = Database.open(database.target);
    try {
      const limiters = [limiter, new RateLimiter(other)];
      // Six attempts at once, through two pools, to use up the same code.
      const outcomes = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          limiters[i % 2]!.hitWith(wide, "s6", at(i / 1000), "slow down", {
            claim: updateOf("RateLimit", { times: "used" }, { key: "code", times: "unused" }),
            inserts: [rowOf("RateLimit", { key: `claimed:${i}`, times: "" })],
            updates: [updateOf("RateLimit", { times: `by ${i}` }, { key: "claimer" })],
          }),
        ),
      );
      expect(outcomes.filter((used) => used)).toHaveLength(1);
      const winner = outcomes.indexOf(true);
      const rows = await db.all(
        q
          .selectFrom("RateLimit")
          .select(["key", "times"])
          .where((eb) =>
            eb.or([eb("key", "like", "claimed:%"), eb("key", "in", ["code", "claimer"])]),
          )
          .orderBy("key"),
      );
      expect(rows).toEqual([
        { key: `claimed:${winner}`, times: "" },
        { key: "claimer", times: `by ${winner}` },
        { key: "code", times: "used" },
      ]);
      // The attempts whose claim failed were still counted: two places are left.
      await limiter.hit(wide, "s6", at(1), "slow down");
      await limiter.hit(wide, "s6", at(1), "slow down");
      await refusal(
        limiter.hitWith(wide, "s6", at(1), "slow down", {
          claim: updateOf("RateLimit", { times: "again" }, { key: "code" }),
        }),
      );
      // A refused attempt made no claim.
      expect(
        await db.one(q.selectFrom("RateLimit").select("times").where("key", "=", "code")),
      ).toEqual({ times: "used" });
    } finally {
      await other.close();
    }
  });

  it("refuses with the gate's answer once the gate's window is full, counting nothing", async () => {
    await limiter.hit(rule, "s4", at(0), "slow down", gate);
    await limiter.record(failures, "s4", at(1));
    await limiter.hit(rule, "s4", at(2), "slow down", gate);
    await limiter.record(failures, "s4", at(3));
    const refused = await refusal(limiter.hit(rule, "s4", at(4), "slow down", gate));
    expect(refused.message).toBe("too many failures");
    // The first failure leaves the 15-minute window at 901 s.
    expect(retryAfter(refused)).toBe(897);
    // Once the gate opens, the rule's own window (0 and 2 s long gone) counts again.
    await limiter.hit(rule, "s4", at(901), "slow down", gate);
    // record counts past the limit without refusing, and keeps the newest.
    await limiter.record(failures, "s4", at(902));
    await limiter.record(failures, "s4", at(903));
    const gateRefused = await refusal(limiter.hit(rule, "s4", at(904), "slow down", gate));
    expect(retryAfter(gateRefused)).toBe(900 + 902 - 904);
  });

  it("passes no more than the limit when two pools attempt at once", async () => {
    const other = Database.open(database.target);
    try {
      const limiters = [limiter, new RateLimiter(other)];
      const wide: RateRule = { name: "test-race", limit: 5, windowSeconds: 60 };
      const attempts = Array.from({ length: 24 }, (_, i) =>
        limiters[i % 2]!.hit(wide, "s5", at(i / 1000), "slow down").then(
          () => "passed",
          (err: unknown) => (err instanceof ApiError && err.status === 429 ? "refused" : err),
        ),
      );
      const outcomes = await Promise.all(attempts);
      expect(outcomes.filter((o) => o === "passed")).toHaveLength(5);
      expect(outcomes.filter((o) => o === "refused")).toHaveLength(19);
    } finally {
      await other.close();
    }
  });
});
