import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AUTH_RATE_LIMITS } from "../src/areas/auth/rate-limits.js";
import { parseDatabaseUrl } from "../src/db/client.js";
import { Database } from "../src/db/database.js";
import { q } from "../src/db/query.js";
import { databases, freshDatabase, type TestDatabase } from "./harness.js";
import { countRows, expectLedgersBalanced } from "./money-helpers.js";
import {
  answered,
  createFixtures,
  driveLoad,
  pause,
  type Fixtures,
  type Outcomes,
} from "./support/shutdown-load.js";
import { exitWithin, killServerProcesses, startServerProcess } from "./support/shutdown-process.js";

// Stopping the built server as CI jobs and process supervisors do: SIGTERM
// while keep-alive clients have requests in flight, with the parent no
// longer reading the server's output. Every stop must end by itself, within
// its deadline, with nothing left half-done. A stop that cannot finish in time
// is in shutdown-deadline.test.ts.

/** The stop deadline the load test runs with (SHUTDOWN_TIMEOUT_MS). */
const DEADLINE_MS = 5_000;
const STOPS = 10;

afterEach(killServerProcesses);

describe.each(databases)("stopping the server process on %s", (kind) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase(kind);
  });
  afterAll(async () => {
    await database?.drop();
  });

  it(
    `ends every one of ${STOPS} SIGTERMs under keep-alive load by itself, within the deadline, with nothing half-written`,
    async () => {
      const outcomes: Outcomes = {
        customers: [],
        transfers: [],
        statuses: new Map(),
        serverErrors: [],
        signalled: false,
        busyPasses: [],
      };
      let fixtures: Fixtures | undefined;
      for (let stop = 1; stop <= STOPS; stop++) {
        const server = await startServerProcess(database.url, {
          SHUTDOWN_TIMEOUT_MS: String(DEADLINE_MS),
        });
        fixtures ??= await createFixtures(server.port, STOPS);
        outcomes.signalled = false;
        const load = driveLoad(server.port, fixtures, stop, outcomes, () => outcomes.signalled);
        // SIGTERM once the load is well under way (a cold process answers
        // its first requests slowly, and the busy credential has reached its
        // limit), at a random moment.
        const answeredBefore = answered(outcomes);
        const underWay = () =>
          answered(outcomes) >= answeredBefore + 6 && outcomes.statuses.has(429);
        while (!underWay() && server.child.exitCode === null) {
          await pause(10);
        }
        await pause(Math.random() * 150);
        // As the reported parent did: SIGTERM, then no more reading of stdout.
        server.child.kill("SIGTERM");
        server.child.stdout!.destroy();
        outcomes.signalled = true;
        const exit = await exitWithin(server, DEADLINE_MS + 3_000);
        expect(exit, `stop ${stop} of ${STOPS}:\n${server.stderr()}`).toEqual({
          code: 0,
          signal: null,
        });
        await load;
      }

      const seen = Object.fromEntries(outcomes.statuses);
      // The run did what it claims: creations answered 201, and 429s.
      expect(seen, JSON.stringify(seen)).toMatchObject({
        201: expect.any(Number),
        429: expect.any(Number),
      });
      // A stop never turned a request into a server error.
      expect(outcomes.serverErrors).toEqual([]);

      const db = Database.open(parseDatabaseUrl(database.url));
      try {
        // Every answered creation is there.
        const customerIds = outcomes.customers;
        expect(await countRows(db, q.selectFrom("Customer").where("id", "in", customerIds))).toBe(
          customerIds.length,
        );
        const transferIds = outcomes.transfers.map((t) => t.id);
        expect(
          await countRows(db, q.selectFrom("Transaction").where("id", "in", transferIds)),
        ).toBe(transferIds.length);
        // No Idempotency-Key is left claimed by a request that never finished
        // (its retry would be refused with 409 until the claim ran out).
        expect(
          await db.all(
            q.selectFrom("IdempotencyRecord").selectAll().where("status", "=", "IN_PROGRESS"),
          ),
        ).toEqual([]);
        const completed = await db.all(
          q
            .selectFrom("IdempotencyRecord")
            .select(["status", "responseStatus"])
            .where(
              "key",
              "in",
              outcomes.transfers.map((t) => t.key),
            ),
        );
        expect(completed).toHaveLength(outcomes.transfers.length);
        expect(completed.every((r) => r.status === "COMPLETED" && r.responseStatus === 201)).toBe(
          true,
        );
        // Balances match their ledger entries.
        await expectLedgersBalanced(db);
        // A refused (429) attempt is not counted, and the limit held across
        // the stops: no window passed more than the limit's challenges (the
        // client sends them one at a time, so a pass's time lies between its
        // sending and its answer).
        const { limit, windowSeconds } = AUTH_RATE_LIMITS.challenge;
        const passes = outcomes.busyPasses;
        expect(passes.length).toBeGreaterThan(0);
        for (let i = 0; i + limit < passes.length; i++) {
          const span = passes[i + limit]!.answered - passes[i]!.sent;
          expect(span).toBeGreaterThanOrEqual(windowSeconds * 1000);
        }
      } finally {
        await db.close();
      }
    },
    // About 45 s on an idle machine; far more when the cores are shared.
    STOPS * 25_000,
  );
});
