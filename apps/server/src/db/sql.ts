import type { DatabaseTarget } from "./client.js";
import { openPostgresDriver } from "./postgres-driver.js";
import type { SqlDriver } from "./sql-steps.js";
import { openSqliteDriver } from "./sqlite-driver.js";

// The SQL driver under the data layer (database.ts): the connections, the
// transactions and the storage formats (the ones Prisma's migrations define:
// DateTime as text on SQLite and TIMESTAMP(3) UTC on PostgreSQL, BigInt as
// integers). Statements come typed from query.ts.
//
// A write transaction is written once, as a generator of steps (sql-steps.ts),
// and run synchronously on SQLite (sqlite-driver.ts) and asynchronously on
// PostgreSQL (postgres-driver.ts). Values are written and read in the stored
// formats of stored-values.ts.
//
// This module is the data layer's one door to them: callers import the step
// language and the drivers from here.

export {
  KEY_SHARE,
  PLATFORM_GONE,
  SKIP_LOCKED,
  insertSql,
  type SqlCommit,
  type SqlDriver,
  type SqlInsert,
  type SqlOrder,
  type SqlProgram,
  type SqlRow,
  type SqlStep,
  type SqlUpdate,
  type SqlValue,
} from "./sql-steps.js";
export { sqliteTime } from "./stored-values.js";
export { openSqliteDriver, type SqliteDriverOptions } from "./sqlite-driver.js";

/** The driver of the target's database. */
export function openSqlDriver(target: DatabaseTarget): SqlDriver {
  return target.provider === "sqlite"
    ? openSqliteDriver(target.location)
    : openPostgresDriver(target);
}
