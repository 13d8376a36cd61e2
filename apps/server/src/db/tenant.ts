import { AsyncLocalStorage } from "node:async_hooks";
import { rejected } from "../errors.js";
import { PLATFORM_GONE } from "./sql.js";

// The platform a request acts for, as its write transactions see it.
//
// Deleting a platform (DELETE /sandbox/platforms/{id}) must leave nothing
// behind, even with that platform's requests in flight. So every write made
// for a request also reads its platform's row under a shared lock, the lock
// a foreign key would take (the drivers do it, db/sql.ts): on PostgreSQL the
// delete (which deletes that row first) waits for the writes that hold it,
// and those that come after find no row and write nothing; on SQLite write
// transactions run one at a time, and those after the delete find no row.
// A transaction takes that lock first, in the round trip of its BEGIN; a
// write that commits on its own takes it in its one statement, where a
// deadlock with the delete is possible and is resolved by running the
// statement again (it wrote nothing).

const tenant = new AsyncLocalStorage<string>();

/** Runs `work` with its write transactions made for `platformId` (see above). */
export function writingFor<T>(platformId: string, work: () => T): T {
  return tenant.run(platformId, work);
}

/** The platform the current request's writes are for, if any. */
export function currentTenant(): string | undefined {
  return tenant.getStore();
}

/** A deleted platform's write, as the caller sees it: its credentials no longer exist. */
export function tenantError(err: unknown): unknown {
  if ((err as { code?: unknown } | null)?.code !== PLATFORM_GONE) return err;
  return rejected(
    "The platform of these credentials was deleted",
    "Platform deleted while the request ran",
  );
}
