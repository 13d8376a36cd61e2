import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgPoolConfig } from "../src/db/client.js";
import { openSqlDriver, type SqlDriver, type SqlProgram, type SqlStep } from "../src/db/sql.js";
import { outboxInsert } from "../src/events/outbox.js";
import { databases, migratedDatabase, type MigratedDatabase } from "./harness.js";
import { waitFor } from "./webhook-receiver.js";

// The direct-SQL driver behind the card authorization hot path. On SQLite it
// commits transactions that arrive together in one write transaction; each
// must still succeed or fail on its own, and see the ones before it.

describe.each(databases)("direct SQL transactions on %s", (kind) => {
  let database: MigratedDatabase;
  let sql: SqlDriver;
  beforeAll(async () => {
    database = await migratedDatabase(kind);
    sql = openSqlDriver(database.target);
  });
  afterAll(async () => {
    await sql?.close();
    await database?.drop();
  });

  const at = new Date("2025-10-13T09:30:00.000Z");
  const platformRow = (id: string) => ({
    id,
    name: id,
    webhookPrivateKey: "k",
    otpSigningPrivateKey: "k",
    clockOffsetSeconds: 0,
    createdAt: at,
    updatedAt: at,
  });
  function* insertPlatform(id: string, fail = false): SqlProgram<string> {
    yield { kind: "insert", table: "Platform", row: platformRow(id) };
    if (fail) throw new Error(`program ${id} fails after its insert`);
    return id;
  }

  it("commits concurrent transactions independently: a failing one changes nothing", async () => {
    const results = await Promise.allSettled([
      sql.transaction(() => insertPlatform("p-a")),
      sql.transaction(() => insertPlatform("p-b", true)),
      sql.transaction(() => insertPlatform("p-c")),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    for (const [id, present] of [
      ["p-a", true],
      ["p-b", false],
      ["p-c", true],
    ] as const) {
      const row = await sql.one(`SELECT "id", "createdAt" FROM "Platform" WHERE "id" = ?`, [id]);
      expect(row !== undefined, id).toBe(present);
    }
  });

  it("runs queued transactions in order, each seeing the ones before", async () => {
    function* bump(): SqlProgram<number> {
      const row = (yield {
        kind: "one",
        sql: `UPDATE "Platform" SET "clockOffsetSeconds" = "clockOffsetSeconds" + 1 WHERE "id" = ? RETURNING "clockOffsetSeconds"`,
        params: ["p-a"],
      }) as { clockOffsetSeconds: number | bigint };
      return Number(row.clockOffsetSeconds);
    }
    const seen = await Promise.all(Array.from({ length: 50 }, () => sql.transaction(bump)));
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it("returns every row of a read and of an UPDATE ... RETURNING", async () => {
    const ids = await sql.all(`SELECT "id" FROM "Platform" WHERE "id" IN (?, ?, ?) ORDER BY "id"`, [
      "p-a",
      "p-b",
      "p-c",
    ]);
    expect(ids.map((r) => r.id)).toEqual(["p-a", "p-c"]);
    function* rename(): SqlProgram<unknown[]> {
      return (yield {
        kind: "all",
        sql: `UPDATE "Platform" SET "name" = ? WHERE "id" IN (?, ?) RETURNING "id"`,
        params: ["renamed", "p-a", "p-c"],
      }) as unknown[];
    }
    expect(await sql.transaction(rename)).toHaveLength(2);
  });

  it("writes a guarded step's inserts only when the guard matched, filled from the row it returned", async () => {
    function* guarded(min: number): SqlProgram<unknown> {
      return yield {
        kind: "guarded",
        sql: `UPDATE "Platform" SET "clockOffsetSeconds" = "clockOffsetSeconds" + 1 WHERE "id" = ? AND "clockOffsetSeconds" >= ? RETURNING "clockOffsetSeconds"`,
        params: ["p-c", min],
        inserts: [
          {
            table: "Platform",
            row: { ...platformRow(`p-fill-${min}`), name: "offset \u0001, twice \u0001" },
            fromGuard: { clockOffsetSeconds: "clockOffsetSeconds" },
            fillFromGuard: { column: "name", token: "\u0001", from: "clockOffsetSeconds" },
          },
        ],
      };
    }
    expect(await sql.transaction(() => guarded(1))).toBeUndefined();
    expect(
      await sql.one(`SELECT "id" FROM "Platform" WHERE "id" = ?`, ["p-fill-1"]),
    ).toBeUndefined();
    expect(await sql.transaction(() => guarded(0))).toBeDefined();
    const row = await sql.one(
      `SELECT "name", "clockOffsetSeconds" FROM "Platform" WHERE "id" = ?`,
      ["p-fill-0"],
    );
    expect(row?.name).toBe("offset 1, twice 1");
    expect(Number(row?.clockOffsetSeconds)).toBe(1);
  });

  it("reads a stored time as the instant written, whatever the local time zone", async () => {
    const zone = process.env.TZ;
    process.env.TZ = "America/New_York";
    try {
      const row = await sql.one(`SELECT "createdAt" FROM "Platform" WHERE "id" = ?`, ["p-a"]);
      const value = row!.createdAt;
      // SQLite holds Prisma's ISO text; PostgreSQL's TIMESTAMP(3) holds UTC wall time.
      expect(new Date(value instanceof Date ? value : String(value)).toISOString()).toBe(
        at.toISOString(),
      );
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });
  describe("an object's events", () => {
    const objectId = "InternalAccount:00000000-0000-4000-8000-000000000001";
    const event = (n: number, atMs: number) =>
      outboxInsert({
        platformId: "p-order",
        type: "INTERNAL_ACCOUNT.BALANCE_UPDATED",
        objectId,
        data: { n },
        at: new Date(at.getTime() + atMs),
      });
    /** A change of the platform's row (the object's row lock) and its event, in one guarded statement. */
    const change = (insert: ReturnType<typeof event>): SqlStep => ({
      kind: "guarded",
      sql: `UPDATE "Platform" SET "clockOffsetSeconds" = "clockOffsetSeconds" + 1 WHERE "id" = ? RETURNING "id"`,
      params: ["p-order"],
      inserts: [insert],
    });
    const stored = async () =>
      (
        await sql.all(
          `SELECT "id", "seq", "createdAt", "payload" FROM "WebhookEvent" WHERE "objectId" = ? ORDER BY "seq"`,
          [objectId],
        )
      ).map((row) => {
        const createdAt =
          row.createdAt instanceof Date ? row.createdAt : new Date(String(row.createdAt));
        const envelope = JSON.parse(String(row.payload)) as {
          timestamp: string;
          data: { n: number };
        };
        // The envelope's timestamp is the stored time.
        expect(envelope.timestamp).toBe(createdAt.toISOString());
        return { n: envelope.data.n, seq: BigInt(row.seq as bigint), time: createdAt.getTime() };
      });

    beforeAll(async () => {
      await sql.transaction(() => insertPlatform("p-order"));
    });

    it("come after the object's last event, whatever bounds they were drawn with", async () => {
      // The second is drawn first, and a second earlier, but written after.
      const second = event(2, 0);
      const first = event(1, 1000);
      await sql.transaction(function* () {
        return yield change(first);
      });
      await sql.transaction(function* () {
        return yield { kind: "insert", ...second };
      });
      const third = event(3, 1000);
      await sql.transaction(function* () {
        return yield { kind: "insertAll", inserts: [third] };
      });
      const rows = await stored();
      expect(rows.map((row) => row.n)).toEqual([1, 2, 3]);
      expect(rows[0]).toMatchObject({ seq: first.row.seq, time: at.getTime() + 1000 });
      expect(rows[1]).toMatchObject({ seq: first.row.seq + 1n, time: at.getTime() + 1001 });
      // The third keeps its own bound unless it was drawn in the same millisecond
      // slot run as the second's raised seq; then it, too, comes right after.
      const afterSecond = rows[1]!.seq + 1n;
      expect(rows[2]).toMatchObject({
        seq: third.row.seq > afterSecond ? third.row.seq : afterSecond,
        time: at.getTime() + 1002,
      });
    });

    it.runIf(kind === "postgresql")(
      "take their place in commit order when one waits for the object's row",
      async () => {
        const gate = new pg.Client(pgPoolConfig(database.target));
        await gate.connect();
        try {
          await gate.query("SELECT pg_advisory_lock(4242)");
          const late = event(5, 0);
          const early = event(4, 5000);
          // Holds the object's row until the gate opens.
          const holding = sql.transaction(function* () {
            yield change(early);
            yield { kind: "one", sql: "SELECT pg_advisory_xact_lock(4242)", params: [] };
          });
          const waitingOn = async (locktype: string) =>
            Number(
              (
                await gate.query(
                  `SELECT count(*) AS n FROM pg_locks WHERE locktype = $1 AND NOT granted`,
                  [locktype],
                )
              ).rows[0].n,
            ) > 0;
          await waitFor("the first change at the gate", () => waitingOn("advisory"));
          // Its statement starts before the first commits, and waits for the row.
          const waiting = sql.transaction(function* () {
            return yield change(late);
          });
          await waitFor("the second change waiting for the row", () => waitingOn("transactionid"));
          await gate.query("SELECT pg_advisory_unlock(4242)");
          await Promise.all([holding, waiting]);
        } finally {
          await gate.end();
        }
        const rows = (await stored()).slice(-2);
        expect(rows.map((row) => row.n)).toEqual([4, 5]);
        expect(rows[1]!.seq).toBe(rows[0]!.seq + 1n);
        expect(rows[1]!.time).toBe(rows[0]!.time + 1);
      },
    );
  });
});
