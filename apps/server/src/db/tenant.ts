import { AsyncLocalStorage } from "node:async_hooks";
import { rejected } from "../errors.js";
import { KEY_SHARE, type SqlProgram } from "./sql.js";

// The platform a request acts for, as its write transactions see it.
//
// Deleting a platform (DELETE /sandbox/platforms/{id}) must leave nothing
// behind, even with that platform's requests in flight. So every write
// transaction made for a request first reads its platform's row under a
// shared lock, the lock a foreign key would take: on PostgreSQL the delete
// (which deletes that row first) waits for the transactions that hold it,
// and those that come after find no row and write nothing; on SQLite write
// transactions run one at a time, and those after the delete find no row.
// The check is the first lock such a transaction takes, so the delete and a
// request never wait for each other in a cycle.

const tenant = new AsyncLocalStorage<string>();

/** Runs `work` with its write transactions made for `platformId` (see above). */
export function writingFor<T>(platformId: string, work: () => T): T {
  return tenant.run(platformId, work);
}

/** The platform the current request's writes are for, if any. */
export function currentTenant(): string | undefined {
  return tenant.getStore();
}

/** What a write transaction of a deleted platform fails with (it crosses threads by its code). */
const GONE = "PLATFORM_GONE";

/** The program, once its platform is found still there. */
export function* forTenant<R>(platformId: string, program: SqlProgram<R>): SqlProgram<R> {
  const row = yield {
    kind: "one",
    sql: `SELECT 1 AS "x" FROM "Platform" WHERE "id" = ? ${KEY_SHARE}`,
    params: [platformId],
  };
  if (row === undefined) {
    throw Object.assign(new Error(`platform ${platformId} was deleted`), { code: GONE });
  }
  return yield* program;
}

/** A deleted platform's write, as the caller sees it: its credentials no longer exist. */
export function tenantError(err: unknown): unknown {
  if ((err as { code?: unknown } | null)?.code !== GONE) return err;
  return rejected(
    "The platform of these credentials was deleted",
    "Platform deleted while the request ran",
  );
}
