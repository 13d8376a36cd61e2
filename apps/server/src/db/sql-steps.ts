import type { Provider } from "./client.js";

// The language of the data layer's write transactions: a program is a
// generator of steps (SqlStep), which each driver runs in its own way
// (sqlite-driver.ts, postgres-driver.ts), and the pieces of statement text
// that both drivers spell alike.

export type SqlValue = string | number | bigint | boolean | Date | null;

/** A row to insert. */
export interface SqlInsert {
  table: string;
  row: Readonly<Record<string, SqlValue>>;
  /**
   * In a guarded step only: columns whose value is a column of the row the
   * guard returned (column → returned column), e.g. a balance after a debit.
   */
  fromGuard?: Readonly<Record<string, string>>;
  /**
   * In a guarded step only: a text column written from a template whose
   * `token` is replaced, everywhere, by a column of the guard's row as text;
   * e.g. an event's payload that carries the balance after a debit.
   */
  fillFromGuard?: Readonly<{ column: string; token: string; from: string }>;
  /** The row takes its place in its object's order (see SqlOrder). */
  ordered?: SqlOrder;
}

/**
 * A row that takes its place in the order of its object's rows: the outbox's
 * events, whose seq orders their delivery and whose time is the envelope's
 * `timestamp` and orders the event list. The row's own `seq` and `time`
 * values are lower bounds; the insert raises them above the object's last
 * (by 1, and by a millisecond), read and advanced in its EventOrder row in
 * the same statement. That row stays locked until the transaction commits,
 * so of two transactions that write rows of one object, the one that
 * commits first has the lower seq and the earlier time, on PostgreSQL too,
 * whatever order they drew their lower bounds in. (On SQLite transactions
 * run one at a time.) The time also replaces `token` in the `text` column,
 * as ISO 8601. One row per object and statement.
 */
export interface SqlOrder {
  platformId: string;
  objectId: string;
  seq: string;
  time: string;
  text: Readonly<{ column: string; token: string }>;
}

/** The last seq and time of each object's ordered rows (prisma/schema.base.prisma). */
export const ORDER_TABLE = `"EventOrder"`;

/**
 * In a guarded step: an update of the rows whose columns equal `where`'s
 * values, made only when the guard returned a row.
 */
export interface SqlUpdate {
  table: string;
  set: Readonly<Record<string, SqlValue>>;
  where: Readonly<Record<string, SqlValue>>;
}

/**
 * Row locks that skip rows another transaction holds, for a select that
 * chooses rows to write (`... WHERE "id" IN (SELECT "id" ... ${SKIP_LOCKED})`).
 * PostgreSQL locks each row and passes over those already locked, so the
 * statement never waits and cannot take part in a deadlock. SQLite has no row
 * locks (a write transaction holds the whole database) and drops the clause.
 */
export const SKIP_LOCKED = "FOR UPDATE SKIP LOCKED";

/**
 * A shared lock on the rows read, as a foreign key's check takes (see
 * tenant.ts): a delete of the row waits for it, an update of other columns
 * does not. SQLite drops the clause, as it does SKIP_LOCKED.
 */
export const KEY_SHARE = "FOR KEY SHARE";

/** The code of the error a write of a deleted platform fails with (it crosses threads by its code). */
export const PLATFORM_GONE = "PLATFORM_GONE";

export function platformGone(platformId: string): Error {
  return Object.assign(new Error(`platform ${platformId} was deleted`), { code: PLATFORM_GONE });
}

/** The platform's row, under the lock a foreign key's check takes (see tenant.ts). */
export const TENANT_SQL = `SELECT 1 AS "tenantFound" FROM "Platform" WHERE "id" = ? ${KEY_SHARE}`;

/** The program, once its platform is found still there (in the same transaction). */
export function* forTenant<R>(platformId: string, program: SqlProgram<R>): SqlProgram<R> {
  const row = yield { kind: "one", sql: TENANT_SQL, params: [platformId] };
  if (row === undefined) throw platformGone(platformId);
  return yield* program;
}

/** One statement of a transaction. SQL uses `?` placeholders and quoted identifiers. */
export type SqlStep =
  /** First row, or undefined. */
  | { kind: "one"; sql: string; params: readonly SqlValue[] }
  /** Every row (e.g. of an UPDATE ... RETURNING). */
  | { kind: "all"; sql: string; params: readonly SqlValue[] }
  /** Number of rows changed. */
  | { kind: "run"; sql: string; params: readonly SqlValue[] }
  | ({ kind: "insert" } & SqlInsert)
  /**
   * A guarded write and what follows from it, as one unit: `sql` is a write
   * with RETURNING (an UPDATE, or an upsert); only when it returns a row are
   * `inserts` and `updates` made. Result: that row, or undefined (nothing
   * written). On PostgreSQL it is one statement (a data-modifying WITH), so
   * one round trip.
   *
   * With a `claim` (an update that must change a row, e.g. using up a
   * one-time code), the claim is made once the guard returned a row, and the
   * inserts and updates only if it changed one; the guard's row then carries
   * `claimed` (whether it did). As with the inserts, no update may touch
   * the claim's row (PostgreSQL's parts of one statement do not see each
   * other's changes).
   */
  | {
      kind: "guarded";
      sql: string;
      params: readonly SqlValue[];
      inserts: readonly SqlInsert[];
      updates?: readonly SqlUpdate[];
      claim?: SqlUpdate;
    }
  /**
   * Inserts that do not depend on each other (none reads another's row), as
   * one unit and, on PostgreSQL, one statement.
   */
  | { kind: "insertAll"; inserts: readonly SqlInsert[] };

/**
 * How a program's steps are committed. "transaction" (the default): all or
 * nothing. "eachStep": each step commits on its own; for a program whose
 * every step is a complete, consistent change by itself (a guarded step, an
 * insertAll), it saves PostgreSQL the BEGIN and COMMIT round trips. On
 * SQLite every program runs in a transaction (its commits are grouped anyway).
 */
export type SqlCommit = "transaction" | "eachStep";

export type SqlRow = Record<string, unknown>;

export type SqlProgram<R> = Generator<SqlStep, R, unknown>;

export interface SqlDriver {
  readonly provider: Provider;
  /** One read outside any transaction. */
  one(sql: string, params: readonly SqlValue[]): Promise<SqlRow | undefined>;
  /** One read outside any transaction: every row. */
  all(sql: string, params: readonly SqlValue[]): Promise<SqlRow[]>;
  /**
   * Runs the steps as one write transaction (unless `commit` says otherwise);
   * `program` may be started again after contention. With `platformId`, its
   * writes are made only while that platform exists (tenant.ts); if it was
   * deleted, nothing is written and the promise rejects with a
   * PLATFORM_GONE error.
   */
  transaction<R>(program: () => SqlProgram<R>, commit?: SqlCommit, platformId?: string): Promise<R>;
  close(): Promise<void>;
}

export function insertSql(table: string, columns: readonly string[]): string {
  const names = columns.map((c) => `"${c}"`).join(", ");
  return `INSERT INTO "${table}" (${names}) VALUES (${columns.map(() => "?").join(", ")})`;
}

/** An update's text, and its values in order (for the driver to convert). */
export function updateStatement(update: SqlUpdate): { sql: string; values: SqlValue[] } {
  const set = Object.keys(update.set);
  const where = Object.keys(update.where);
  if (where.length === 0) throw new Error(`an update of ${update.table} needs a WHERE`);
  return {
    sql:
      `UPDATE "${update.table}" SET ${set.map((c) => `"${c}" = ?`).join(", ")}` +
      ` WHERE ${where.map((c) => `"${c}" = ?`).join(" AND ")}`,
    values: [
      ...set.map((c) => update.set[c] ?? null),
      ...where.map((c) => update.where[c] ?? null),
    ],
  };
}

/** Most prepared statements a driver keeps (SqliteDriver.prepare, PostgresDriver.statement). */
export const MAX_KEPT_STATEMENTS = 4096;

/** A short, growing, randomised wait before a program is tried again after contention. */
export function pause(attempt: number): Promise<void> {
  const ms = Math.min(20, 1 + attempt) * (0.5 + Math.random());
  return new Promise((resolve) => setTimeout(resolve, ms));
}
