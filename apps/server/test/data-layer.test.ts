import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { defaultConnectionLimit, parseDatabaseUrl, type DatabaseTarget } from "../src/db/client.js";
import { Database } from "../src/db/database.js";
import { isUniqueViolation } from "../src/db/errors.js";
import { batchedRead, insert, one, prepared, q, run } from "../src/db/query.js";
import { databases, migratedDatabase, type MigratedDatabase } from "./harness.js";

// The one data layer: statements typed from the Prisma schema, run by the SQL
// driver. What goes in must come out as the same values on both databases,
// whatever each stores (text dates and 64-bit integers on SQLite, TIMESTAMP(3)
// and BIGINT text on PostgreSQL).

describe.each(databases)("the data layer on %s", (kind) => {
  let database: MigratedDatabase;
  let db: Database;
  beforeAll(async () => {
    database = await migratedDatabase(kind);
    db = Database.open(database.target);
  });
  afterAll(async () => {
    await db?.close();
    await database?.drop();
  });

  const at = new Date("2025-10-13T09:30:00.123Z");
  const account = (id: string, balance: bigint) => ({
    id,
    platformId: "Platform:p1",
    customerId: "Customer:c1",
    type: "STANDARD",
    currency: "USD",
    balance,
    status: "ACTIVE",
    privacyEnabled: true,
    walletPrivateKey: null,
    createdAt: at,
    updatedAt: at,
  });

  it("reads back exactly what it wrote: dates, bigints past 2^53, booleans, nulls", async () => {
    const big = 2n ** 62n + 7n;
    await db.transaction(() => insert("InternalAccount", account("IA:1", big)));
    const row = await db.one(q.selectFrom("InternalAccount").selectAll().where("id", "=", "IA:1"));
    expect(row).toEqual(account("IA:1", big));
    expect(row?.createdAt).toBeInstanceOf(Date);
  });

  it("formats a time it read as the time written, and a changed one as changed", async () => {
    const row = await db.one(
      q.selectFrom("InternalAccount").select("createdAt").where("id", "=", "IA:1"),
    );
    const read = row!.createdAt;
    expect(read.toISOString()).toBe("2025-10-13T09:30:00.123Z");
    expect(JSON.stringify({ read })).toBe('{"read":"2025-10-13T09:30:00.123Z"}');
    read.setUTCFullYear(2026);
    expect(read.toISOString()).toBe("2026-10-13T09:30:00.123Z");

    // PostgreSQL writes fewer fractional digits when they end in 0.
    const round = new Date("2025-10-13T09:30:00.120Z");
    await db.transaction(() =>
      insert("InternalAccount", { ...account("IA:3", 1n), createdAt: round }),
    );
    const rounded = await db.one(
      q.selectFrom("InternalAccount").select("createdAt").where("id", "=", "IA:3"),
    );
    expect(rounded?.createdAt.toISOString()).toBe("2025-10-13T09:30:00.120Z");
  });

  it("compares dates by value in WHERE clauses and orders by them", async () => {
    const later = new Date(at.getTime() + 1);
    await db.transaction(() =>
      insert("InternalAccount", { ...account("IA:2", 5n), createdAt: later }),
    );
    const after = await db.all(
      q.selectFrom("InternalAccount").select("id").where("createdAt", ">", at).orderBy("createdAt"),
    );
    expect(after.map((r) => r.id)).toEqual(["IA:2"]);
  });

  it("rolls a whole program back when a step throws, and keeps the error", async () => {
    class Refused extends Error {}
    const attempt = db.transaction(function* () {
      yield* run(q.updateTable("InternalAccount").set({ balance: 0n }).where("id", "=", "IA:2"));
      throw new Refused("after the update");
    });
    await expect(attempt).rejects.toBeInstanceOf(Refused);
    const row = await db.one(
      q.selectFrom("InternalAccount").select("balance").where("id", "=", "IA:2"),
    );
    expect(row?.balance).toBe(5n);
  });

  it("reports a duplicate key as a unique violation, whichever database refused it", async () => {
    const error = await db
      .transaction(() => insert("InternalAccount", account("IA:1", 1n)))
      .catch((err: unknown) => err);
    expect(isUniqueViolation(error)).toBe(true);
  });

  it("returns the updated row of a conditional update, or nothing when its guard fails", async () => {
    const debit = (amount: bigint) =>
      db.transaction(() =>
        one(
          q
            .updateTable("InternalAccount")
            .set((eb) => ({ balance: eb("balance", "-", amount) }))
            .where("id", "=", "IA:2")
            .where("balance", ">=", amount)
            .returning("balance"),
        ),
      );
    expect(await debit(3n)).toEqual({ balance: 2n });
    expect(await debit(3n)).toBeUndefined();
  });

  it("runs a prepared statement with each call's arguments", async () => {
    const byId = prepared((args: { id: string; min: bigint }) =>
      q
        .selectFrom("InternalAccount")
        .select(["id", "balance"])
        .where("id", "=", args.id)
        .where("balance", ">=", args.min)
        .where("currency", "=", "USD"),
    );
    expect(await db.one(byId({ id: "IA:1", min: 0n }))).toEqual({
      id: "IA:1",
      balance: 2n ** 62n + 7n,
    });
    expect(await db.one(byId({ id: "IA:2", min: 0n }))).toEqual({ id: "IA:2", balance: 2n });
    expect(await db.one(byId({ id: "IA:2", min: 3n }))).toBeUndefined();
  });

  it("writes a page's limit into the statement and returns that many rows", async () => {
    const page = (limit: number) =>
      q.selectFrom("InternalAccount").select("id").orderBy("id").limit(limit);
    // A bound LIMIT makes SQLite prepare the statement again on every run.
    const compiled = page(1).compile();
    expect(compiled.sql).toMatch(/ limit 1$/);
    expect(compiled.parameters).toEqual([]);
    expect((await db.all(page(1))).map((r) => r.id)).toEqual(["IA:1"]);
    expect((await db.all(page(2))).map((r) => r.id)).toEqual(["IA:1", "IA:2"]);
  });

  it("reads rows by key, each caller getting only its key's row (on PostgreSQL, a turn's keys in one statement)", async () => {
    await db.transaction(function* () {
      yield* insert("InternalAccount", { ...account("IA:b1", 1n), platformId: "Platform:b1" });
      yield* insert("InternalAccount", { ...account("IA:b2", 2n), platformId: "Platform:b2" });
    });
    const byKey = batchedRead({ id: "id", platformId: "platformId" }, (where) =>
      q.selectFrom("InternalAccount").select(["id", "platformId", "balance"]).where(where),
    );
    // One key (every read on SQLite) is a plain equality: SQLite reads the
    // list form ten times slower.
    expect(byKey.statement([{ id: "x", platformId: "y" }]).compile().sql).not.toMatch(/values/);
    // Five keys, padded to a statement of eight.
    expect(
      byKey.statement(Array(5).fill({ id: "x", platformId: "y" })).compile().parameters,
    ).toHaveLength(16);
    const keys = [
      { id: "IA:b1", platformId: "Platform:b1" },
      { id: "IA:b2", platformId: "Platform:b2" },
      // Another platform's id reads as nothing.
      { id: "IA:b1", platformId: "Platform:b2" },
      { id: "IA:none", platformId: "Platform:b1" },
      { id: "IA:b1", platformId: "Platform:b1" },
      // A key PostgreSQL could not take fails alone, without failing the batch.
      { id: "IA:b1\u0000", platformId: "Platform:b1" },
    ];
    const rows = await Promise.all(keys.map((key) => db.batched(byKey, key)));
    expect(rows).toEqual([
      { id: "IA:b1", platformId: "Platform:b1", balance: 1n },
      { id: "IA:b2", platformId: "Platform:b2", balance: 2n },
      undefined,
      undefined,
      { id: "IA:b1", platformId: "Platform:b1", balance: 1n },
      undefined,
    ]);
    // More keys in a turn than one statement takes: read in several.
    const many = Array.from({ length: 70 }, (_, i) =>
      i % 2 === 0 ? keys[i % 4]! : { id: `IA:absent${i}`, platformId: "Platform:b1" },
    );
    const answers = await Promise.all(many.map((key) => db.batched(byKey, key)));
    expect(answers.map((row) => row?.id)).toEqual(
      many.map((_, i) => (i % 4 === 0 ? "IA:b1" : undefined)),
    );
  });

  it("refuses a prepared statement whose shape depends on an argument", () => {
    const shaped = prepared((args: { id: string }) =>
      q.selectFrom("InternalAccount").select("id").where("id", "=", args.id.slice(1)),
    );
    expect(() => shaped({ id: "IA:1" }).compile()).toThrow(/argument id is not a parameter/);
  });
});

describe.runIf(databases.includes("postgresql"))("PostgreSQL connections", () => {
  let database: MigratedDatabase;
  beforeAll(async () => {
    database = await migratedDatabase("postgresql");
  });
  afterAll(async () => {
    await database?.drop();
  });

  /** The backends that served `count` reads made at once, each held 50 ms. */
  async function backendsServing(target: DatabaseTarget, count: number): Promise<Set<number>> {
    const db = Database.open(target);
    try {
      const reads = Array.from({ length: count }, () =>
        db.one(
          q.selectNoFrom([
            sql<number>`pg_backend_pid()`.as("pid"),
            sql<string>`pg_sleep(0.05)::text`.as("slept"),
          ]),
        ),
      );
      return new Set((await Promise.all(reads)).map((row) => row!.pid));
    } finally {
      await db.close();
    }
  }

  it("opens at most connection_limit of them, and reads the rest of the URL as before", async () => {
    const target = parseDatabaseUrl(`${database.url}&connection_limit=2`);
    expect(target.connectionLimit).toBe(2);
    expect(target.location).not.toContain("connection_limit");
    expect(await backendsServing(target, 8)).toHaveProperty("size", 2);
  });

  it("opens twice the cores plus one by default, as Prisma does", async () => {
    const limit = defaultConnectionLimit();
    const target = parseDatabaseUrl(database.url);
    expect(target.connectionLimit).toBe(limit);
    expect(await backendsServing(target, limit + 4)).toHaveProperty("size", limit);
  });
});
