import Database from "better-sqlite3";
import pg from "pg";
import type { DatabaseTarget, Provider } from "./client.js";
import { pgPoolConfig } from "./client.js";
import { keptBy } from "../kept.js";

// The SQL driver under the data layer (database.ts): the connections, the
// transactions and the storage formats (the ones Prisma's migrations define:
// DateTime as text on SQLite and TIMESTAMP(3) UTC on PostgreSQL, BigInt as
// integers). Statements come typed from query.ts.
//
// A write transaction is written once, as a generator of steps, and run
// synchronously on SQLite (better-sqlite3 is synchronous: the write lock is
// never held across an await, so this thread never waits on it for another of
// its own connections) and asynchronously on PostgreSQL.
//
// On SQLite the commit costs more than the statements, so transactions that
// arrive together are committed together (group commit): each runs in its
// own savepoint, in arrival order, inside one write transaction. A program
// that fails rolls back only its savepoint; the others still commit.

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
const ORDER_TABLE = `"EventOrder"`;

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

/** The statement as SQLite takes it: without PostgreSQL's row locks. */
function withoutRowLocks(sql: string): string {
  return sql.replaceAll(SKIP_LOCKED, "").replaceAll(KEY_SHARE, "");
}

/** The code of the error a write of a deleted platform fails with (it crosses threads by its code). */
export const PLATFORM_GONE = "PLATFORM_GONE";

function platformGone(platformId: string): Error {
  return Object.assign(new Error(`platform ${platformId} was deleted`), { code: PLATFORM_GONE });
}

/** The platform's row, under the lock a foreign key's check takes (see tenant.ts). */
const TENANT_SQL = `SELECT 1 AS "tenantFound" FROM "Platform" WHERE "id" = ? ${KEY_SHARE}`;

/** The program, once its platform is found still there (in the same transaction). */
function* forTenant<R>(platformId: string, program: SqlProgram<R>): SqlProgram<R> {
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

/** Prisma's SQLite DateTime format. */
function sqliteValue(value: SqlValue): SqlValue {
  if (value instanceof Date) return value.toISOString().replace("Z", "+00:00");
  if (typeof value === "boolean") return value ? 1 : 0;
  return value;
}

/** Prisma's PostgreSQL DateTime format: UTC wall time for TIMESTAMP(3). */
function pgValue(value: SqlValue): unknown {
  if (value instanceof Date) return value.toISOString().replace("T", " ").replace("Z", "");
  if (typeof value === "bigint") return value.toString();
  return value;
}

/**
 * A time read from the database that keeps the ISO 8601 form its stored text
 * already spells: a view formats every time it shows (toISOString, twice per
 * row of a list), and formatting costs about twice the parse (565 against
 * 264 ns, measured). A time changed after reading formats as any Date does.
 */
class StoredTime extends Date {
  readonly #iso: string | undefined;
  readonly #time: number;

  /** `iso`: the time exactly as toISOString() writes it. */
  constructor(iso: string) {
    super(iso);
    this.#time = this.getTime();
    this.#iso = Number.isNaN(this.#time) ? undefined : iso;
  }

  override toISOString(): string {
    return this.#iso !== undefined && this.getTime() === this.#time
      ? this.#iso
      : super.toISOString();
  }
}

/** A SQLite DateTime, as sqliteValue writes it (`2025-10-13T09:30:00.123+00:00`). */
export function sqliteTime(text: string): Date {
  return text.length === 29 && text[10] === "T" && text.endsWith("+00:00")
    ? new StoredTime(`${text.slice(0, 23)}Z`)
    : new Date(text);
}

/** A PostgreSQL TIMESTAMP(3) in UTC, as text (`2025-10-13 09:30:00.123`; fewer digits when they are 0). */
function pgTime(text: string): Date {
  const iso = `${text.replace(" ", "T")}Z`;
  return iso.length === 24 ? new StoredTime(iso) : new Date(iso);
}

/** A row read as an array, as the object the driver's callers take. */
function rowObject(names: readonly string[], values: readonly unknown[]): SqlRow {
  const row: SqlRow = {};
  for (let i = 0; i < names.length; i++) row[names[i]!] = values[i];
  return row;
}

interface Queued {
  program: () => SqlProgram<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}
type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
/** Most transactions committed together. */
const MAX_GROUP = 256;
/** Most prepared statements a driver keeps (SqliteDriver.prepare, PostgresDriver.statement). */
const MAX_KEPT_STATEMENTS = 4096;

class SqliteDriver implements SqlDriver {
  readonly provider = "sqlite" as const;
  private readonly db: Database.Database;
  /**
   * Kept for the process, within a bound: statements differ by their filters
   * and page size, so a caller could make many; past the bound the kept ones
   * are dropped and prepared again as they recur.
   */
  private readonly statements = keptBy<Database.Statement>(MAX_KEPT_STATEMENTS);
  private readonly inserts = new Map<string, Map<string, string>>();
  /** Runs one program; called inside `batch`, it is a savepoint. */
  private readonly runner: Database.Transaction<(program: () => SqlProgram<unknown>) => unknown>;
  /** Runs the queued programs in one write transaction. */
  private readonly batch: Database.Transaction<(queued: readonly Queued[]) => Outcome[]>;
  private queue: Queued[] = [];
  private flushScheduled = false;

  private readonly gatherMs: number;
  private readonly completeCheckpointEvery: number;
  private commitsSinceCheckpoint = 0;

  constructor(file: string, options: SqliteDriverOptions = {}) {
    this.gatherMs = options.gatherMs ?? 0;
    this.completeCheckpointEvery = options.completeCheckpointEvery ?? 0;
    // Setting up may wait for another process that is starting on the same
    // file (its migration or first checkpoint holds the lock for a moment).
    this.db = new Database(file, { timeout: 10_000 });
    this.db.defaultSafeIntegers(true);
    // In WAL mode NORMAL skips the fsync on each commit (the WAL is synced at
    // checkpoints): a commit survives a crash of the process, though not
    // necessarily a power cut. That is the right trade for a sandbox whose hot
    // path commits on every request.
    this.db.pragma("synchronous = NORMAL");
    // Read the file through a memory map instead of read system calls (costly
    // on this kind of VM). The page cache stays moderate: SQLite walks the
    // whole cache at every commit, and with time-ordered ids (ids.ts) the
    // pages a commit touches are few. 8 MB measured faster than 64 MB.
    this.db.pragma("cache_size = -8192");
    this.db.pragma("mmap_size = 268435456");
    // Group commit runs each transaction in a savepoint; its undo journal
    // otherwise goes to a temporary file, a write system call per page.
    this.db.pragma("temp_store = MEMORY");
    // Another thread copies the WAL into the database file (see
    // SqliteDriverOptions): none of that copying, nor its fsyncs, on commit.
    if (this.completeCheckpointEvery > 0) this.db.pragma("wal_autocheckpoint = 0");
    // From here on, never wait synchronously for a lock another connection of
    // this process may hold across an await; contention is retried
    // asynchronously instead.
    this.db.pragma("busy_timeout = 0");
    this.runner = this.db.transaction((program: () => SqlProgram<unknown>) => {
      const steps = program();
      let input: unknown;
      for (;;) {
        const next = steps.next(input);
        if (next.done) return next.value;
        input = this.exec(next.value);
      }
    });
    this.batch = this.db.transaction((queued: readonly Queued[]) =>
      queued.map((item): Outcome => {
        try {
          return { ok: true, value: this.runner(item.program) };
        } catch (error) {
          return { ok: false, error };
        }
      }),
    );
  }

  private insertStatement(table: string, columns: string[]): Database.Statement {
    let byColumns = this.inserts.get(table);
    if (!byColumns) this.inserts.set(table, (byColumns = new Map()));
    const key = columns.join(",");
    let sql = byColumns.get(key);
    if (sql === undefined) byColumns.set(key, (sql = insertSql(table, columns)));
    return this.prepare(sql);
  }

  private prepare(sql: string): Database.Statement {
    return this.statements(sql, () => {
      const statement = this.db.prepare(withoutRowLocks(sql));
      // Rows come back as arrays and become objects here: better-sqlite3
      // builds a row object property by property through V8's API, which
      // measured about twice the cost of reading the same row as an array.
      if (statement.reader) {
        statement.raw(true);
        this.columns.set(
          statement,
          statement.columns().map((c) => c.name),
        );
      }
      return statement;
    });
  }

  private readonly columns = new WeakMap<Database.Statement, readonly string[]>();

  /** The first row, or undefined. */
  private getRow(sql: string, params: readonly SqlValue[]): SqlRow | undefined {
    const statement = this.prepare(sql);
    const row = statement.get(...params.map(sqliteValue)) as unknown[] | undefined;
    return row === undefined ? undefined : rowObject(this.columns.get(statement)!, row);
  }

  private allRows(sql: string, params: readonly SqlValue[]): SqlRow[] {
    const statement = this.prepare(sql);
    const names = this.columns.get(statement)!;
    return (statement.all(...params.map(sqliteValue)) as unknown[][]).map((row) =>
      rowObject(names, row),
    );
  }

  private exec(step: SqlStep): unknown {
    switch (step.kind) {
      case "one":
        return this.getRow(step.sql, step.params);
      case "all":
        return this.allRows(step.sql, step.params);
      case "run":
        return this.prepare(step.sql).run(...step.params.map(sqliteValue)).changes;
      case "insert":
        return this.insert(step);
      case "guarded": {
        const guard = this.getRow(step.sql, step.params);
        if (guard === undefined) return undefined;
        if (step.claim !== undefined) {
          guard.claimed = this.update(step.claim) > 0;
          if (!guard.claimed) return guard;
        }
        for (const insert of step.inserts) this.insert(insert, guard);
        for (const update of step.updates ?? []) this.update(update);
        return guard;
      }
      case "insertAll":
        for (const insert of step.inserts) this.insert(insert);
        return undefined;
    }
  }

  private update(update: SqlUpdate): number {
    const { sql, values } = updateStatement(update);
    return this.prepare(sql).run(...values.map(sqliteValue)).changes;
  }

  private insert(insert: SqlInsert, guard?: SqlRow): number {
    const columns = Object.keys(insert.row);
    const fill = insert.fillFromGuard;
    const order = insert.ordered;
    const place = order === undefined ? undefined : this.takePlace(insert.row, order);
    const values = columns.map((c) => {
      const from = insert.fromGuard?.[c];
      if (from !== undefined && guard !== undefined) return guard[from] as SqlValue;
      if (place !== undefined && c === order!.seq) return place.seq;
      if (place !== undefined && c === order!.time) return place.time;
      let value = sqliteValue(insert.row[c] ?? null);
      if (fill?.column === c && guard !== undefined) {
        value = String(value).replaceAll(fill.token, String(guard[fill.from]));
      }
      if (place !== undefined && c === order!.text.column) {
        value = String(value).replaceAll(order!.text.token, sqliteTime(place.time).toISOString());
      }
      return value;
    });
    return this.insertStatement(insert.table, columns).run(...values).changes;
  }

  /** The seq and time (as stored) of an ordered row: see SqlOrder. */
  private takePlace(row: SqlInsert["row"], order: SqlOrder): { seq: bigint; time: string } {
    const place = this.getRow(ORDER_SQLITE, [
      order.platformId,
      order.objectId,
      row[order.seq] ?? null,
      row[order.time] ?? null,
    ]);
    return { seq: place!.seq as bigint, time: String(place!.at) };
  }

  async one(sql: string, params: readonly SqlValue[]): Promise<SqlRow | undefined> {
    return this.read(() => this.getRow(sql, params));
  }

  async all(sql: string, params: readonly SqlValue[]): Promise<SqlRow[]> {
    return this.read(() => this.allRows(sql, params));
  }

  private async read<T>(query: () => T): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return query();
      } catch (err) {
        if (!isBusy(err) || attempt >= 200) throw err;
        await pause(attempt);
      }
    }
  }

  transaction<R>(
    program: () => SqlProgram<R>,
    _commit?: SqlCommit,
    platformId?: string,
  ): Promise<R> {
    // Write transactions run one at a time: the check needs no lock.
    const steps = platformId === undefined ? program : () => forTenant(platformId, program());
    return new Promise<R>((resolve, reject) => {
      this.queue.push({
        program: steps,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        // After this turn's I/O callbacks: everything that arrived with it joins.
        this.scheduleFlush();
      }
    });
  }

  private scheduleFlush(): void {
    if (this.gatherMs > 0) setTimeout(() => void this.flush(), this.gatherMs);
    else setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.flushScheduled = false;
    const queued = this.queue.splice(0, MAX_GROUP);
    if (this.queue.length > 0) {
      this.flushScheduled = true;
      this.scheduleFlush();
    }
    for (let attempt = 0; ; attempt++) {
      try {
        // IMMEDIATE takes the write lock up front: no upgrade deadlocks.
        const outcomes = this.batch.immediate(queued);
        outcomes.forEach((outcome, i) => {
          if (outcome.ok) queued[i]!.resolve(outcome.value);
          else queued[i]!.reject(outcome.error);
        });
        this.afterCommit();
        return;
      } catch (err) {
        if (isBusy(err) && attempt < 2000) {
          await pause(attempt);
          continue;
        }
        for (const item of queued) item.reject(err);
        return;
      }
    }
  }

  /**
   * Between commits the WAL is still; a checkpoint run now copies what the
   * background checkpoints have not, and completes, so that the next write
   * transaction starts the WAL file over instead of growing it.
   */
  private afterCommit(): void {
    if (this.completeCheckpointEvery === 0) return;
    if (++this.commitsSinceCheckpoint < this.completeCheckpointEvery) return;
    let result: { busy: unknown; log: unknown; checkpointed: unknown } | undefined;
    try {
      [result] = this.db.pragma("wal_checkpoint(PASSIVE)") as (typeof result)[];
    } catch (err) {
      // The background checkpoint holds the lock: try again after the next commit.
      if (!isBusy(err)) throw err;
      return;
    }
    // Incomplete (a reader still needs old pages): also again after the next commit.
    if (result && Number(result.busy) === 0 && result.log === result.checkpointed) {
      this.commitsSinceCheckpoint = 0;
    }
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

// A time as stored on SQLite (sqliteValue) sorts as text; one millisecond
// later is spelled the same way.
const ORDER_SQLITE = `INSERT INTO ${ORDER_TABLE} ("platformId", "objectId", "seq", "at")
  VALUES (?, ?, ?, ?)
  ON CONFLICT ("platformId", "objectId") DO UPDATE SET
    "seq" = max(excluded."seq", "seq" + 1),
    "at" = max(excluded."at", strftime('%Y-%m-%dT%H:%M:%f+00:00', "at", '+0.001 seconds'))
  RETURNING "seq", "at"`;

/**
 * The EventOrder part of an ordered insert on PostgreSQL: ON CONFLICT waits
 * for the object's row and updates its latest committed version, whatever
 * the statement's snapshot, so its RETURNING holds the row's place.
 */
const orderPg = (
  source: string,
) => `INSERT INTO ${ORDER_TABLE} ("platformId", "objectId", "seq", "at")
  SELECT ?, ?, ?, ?${source}
  ON CONFLICT ("platformId", "objectId") DO UPDATE SET
    "seq" = GREATEST(EXCLUDED."seq", ${ORDER_TABLE}."seq" + 1),
    "at" = GREATEST(EXCLUDED."at", ${ORDER_TABLE}."at" + interval '1 millisecond')
  RETURNING "seq", "at"`;

/** A TIMESTAMP(3) as toISOString() spells it. */
const PG_ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;

/** An update's text, and its values in order (for the driver to convert). */
function updateStatement(update: SqlUpdate): { sql: string; values: SqlValue[] } {
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

/**
 * PostgreSQL text of a guarded step (or, without `guardSql`, of inserts
 * alone) as one statement: every insert is a data-modifying WITH that
 * selects from the guard, so it inserts a row only if the guard returned one
 * (and, with a claim, only if the claim changed one). All parts see one
 * snapshot, which is why the inserts must not read each other's rows.
 */
function guardedStatement(
  guardSql: string | undefined,
  guardParams: readonly SqlValue[],
  inserts: readonly SqlInsert[],
  updates: readonly SqlUpdate[] = [],
  claim?: SqlUpdate,
  platformId?: string,
): { sql: string; values: unknown[] } {
  if (guardSql === undefined && (updates.length > 0 || claim !== undefined)) {
    throw new Error("updates and claims need a guard");
  }
  const values: unknown[] = [];
  const parts: string[] = [];
  // With a platform, every write of the statement also needs its row, read
  // under the platform's lock (tenant.ts): one statement, one round trip.
  const tenant = platformId === undefined ? "" : ` AND EXISTS (SELECT 1 FROM "tenant")`;
  if (platformId !== undefined) {
    values.push(platformId);
    parts.push(`"tenant" AS (${TENANT_SQL})`);
  }
  values.push(...guardParams.map(pgValue));
  if (guardSql !== undefined) parts.push(`"guard" AS (${guardSql})`);
  // What the writes wait for: the guard's row, and the claim's when there is one.
  const decided = claim === undefined ? `"guard"` : `"claim"`;
  if (claim !== undefined) {
    const { sql, values: claimValues } = updateStatement(claim);
    values.push(...claimValues.map(pgValue));
    parts.push(`"claim" AS (${sql} AND EXISTS (SELECT 1 FROM "guard")${tenant} RETURNING 1)`);
  }
  // What an insert selects from: the guard's row, if any, the platform's,
  // and `more`. Without a claim the guard's row alone decides (no subquery
  // on the hot path).
  const sourceWith = (...more: string[]) => {
    const tables = [
      ...(guardSql === undefined ? [] : [`"guard"`]),
      ...(platformId === undefined ? [] : [`"tenant"`]),
      ...more,
    ];
    if (tables.length === 0) return "";
    const ifClaimed = claim === undefined ? "" : ` WHERE EXISTS (SELECT 1 FROM "claim")`;
    return ` FROM ${tables.join(", ")}${ifClaimed}`;
  };
  const ordered = new Set<string>();
  // Parts are made in text order, so that `values` follow their placeholders.
  let last: string | undefined;
  inserts.forEach((insert, i) => {
    const order = insert.ordered;
    const place = `"o${i}"`;
    if (order !== undefined) {
      const key = `${order.platformId} ${order.objectId}`;
      if (ordered.has(key)) throw new Error(`one statement orders two rows of ${key}`);
      ordered.add(key);
      values.push(
        ...[order.platformId, order.objectId, insert.row[order.seq], insert.row[order.time]].map(
          (value) => pgValue(value ?? null),
        ),
      );
      parts.push(`${place} AS (${orderPg(sourceWith())})`);
    }
    const columns = Object.keys(insert.row);
    const fill = insert.fillFromGuard;
    const expressions = columns.map((c) => {
      const from = insert.fromGuard?.[c];
      if (from !== undefined) return `"guard"."${from}"`;
      if (order?.seq === c) return `${place}."seq"`;
      if (order?.time === c) return `${place}."at"`;
      values.push(pgValue(insert.row[c] ?? null));
      let expression = "?";
      if (fill?.column === c && guardSql !== undefined) {
        values.push(fill.token);
        expression = `replace(${expression}, ?, "guard"."${fill.from}"::text)`;
      }
      if (order?.text.column === c) {
        values.push(order.text.token);
        expression = `replace(${expression}, ?, to_char(${place}."at", ${PG_ISO}))`;
      }
      return expression;
    });
    const names = columns.map((c) => `"${c}"`).join(", ");
    const from = order === undefined ? sourceWith() : sourceWith(place);
    const text = `INSERT INTO "${insert.table}" (${names}) SELECT ${expressions.join(", ")}${from}`;
    // The statement proper, without a guard: the last insert.
    if (guardSql === undefined && i === inserts.length - 1) last = text;
    else parts.push(`"w${i}" AS (${text})`);
  });
  // The statement proper: the guard's row, or else the last insert.
  if (guardSql !== undefined) {
    const claimed = claim === undefined ? "" : `, EXISTS (SELECT 1 FROM "claim") AS "claimed"`;
    const found =
      platformId === undefined ? "" : `, EXISTS (SELECT 1 FROM "tenant") AS "tenantFound"`;
    last = `SELECT "guard".*${claimed}${found} FROM "guard"`;
  }
  if (last === undefined) throw new Error("insertAll needs at least one row");
  // Updates run only with a guard (its row, and the claim's, decide whether they happen).
  updates.forEach((update, i) => {
    const { sql, values: updateValues } = updateStatement(update);
    values.push(...updateValues.map(pgValue));
    parts.push(`"u${i}" AS (${sql} AND EXISTS (SELECT 1 FROM ${decided})${tenant})`);
  });
  return { sql: parts.length > 0 ? `WITH ${parts.join(", ")} ${last}` : last, values };
}

class PostgresDriver implements SqlDriver {
  readonly provider = "postgresql" as const;
  private readonly pool: pg.Pool;
  private readonly texts = new Map<string, string>();
  private readonly names = new Map<string, string>();

  constructor(target: DatabaseTarget) {
    const config = pgPoolConfig(target);
    // Like SQLite's synchronous=NORMAL: a commit returns before its WAL record
    // reaches the disk. A crash of the machine may lose the last fraction of a
    // second of commits, never consistency; and a hot row's lock is not held
    // through a disk flush, which is what limits many authorizations on one card.
    this.pool = new pg.Pool({
      ...config,
      options: `${config.options} -c synchronous_commit=off`,
      types: { getTypeParser: utcTimestamps },
    });
  }

  /**
   * The statement as a named prepared statement (parsed once per connection):
   * `?` placeholders become `$1, $2, ...` (our SQL has no `?` elsewhere).
   */
  private statement(sql: string, values: unknown[]): pg.QueryConfig {
    let text = this.texts.get(sql);
    if (text === undefined) {
      let n = 0;
      text = sql.replace(/\?/g, () => `$${++n}`);
      // Each connection keeps every statement it was asked to name; past the
      // bound, new statements go unnamed (parsed on each run) instead.
      if (this.names.size >= MAX_KEPT_STATEMENTS) return { text, values };
      this.texts.set(sql, text);
      this.names.set(sql, `s${this.names.size + 1}`);
    }
    return { name: this.names.get(sql)!, text, values };
  }

  private async exec(client: pg.PoolClient, step: SqlStep): Promise<unknown> {
    switch (step.kind) {
      case "one":
        return (await client.query(this.statement(step.sql, step.params.map(pgValue)))).rows[0];
      case "all":
        return (await client.query(this.statement(step.sql, step.params.map(pgValue)))).rows;
      case "run":
        return (await client.query(this.statement(step.sql, step.params.map(pgValue)))).rowCount;
      case "insert": {
        if (step.ordered !== undefined) {
          const { sql, values } = guardedStatement(undefined, [], [step]);
          return (await client.query(this.statement(sql, values))).rowCount;
        }
        const columns = Object.keys(step.row);
        const values = columns.map((c) => pgValue(step.row[c] ?? null));
        return (await client.query(this.statement(insertSql(step.table, columns), values)))
          .rowCount;
      }
      case "guarded": {
        const { sql, values } = guardedStatement(
          step.sql,
          step.params,
          step.inserts,
          step.updates,
          step.claim,
        );
        return (await client.query(this.statement(sql, values))).rows[0];
      }
      case "insertAll": {
        const { sql, values } = guardedStatement(undefined, [], step.inserts);
        await client.query(this.statement(sql, values));
        return undefined;
      }
    }
  }

  /**
   * A step committed on its own for a platform (SqlCommit "eachStep"): a
   * write of rows is one statement that also reads the platform's row under
   * its lock (guardedStatement), as the step would be without it; any other
   * step gets a transaction of its own with the platform's check.
   */
  private async execFor(
    client: pg.PoolClient,
    step: SqlStep,
    platformId: string,
  ): Promise<unknown> {
    switch (step.kind) {
      case "insert":
      case "insertAll": {
        const inserts = step.kind === "insert" ? [step] : step.inserts;
        const { sql, values } = guardedStatement(undefined, [], inserts, [], undefined, platformId);
        const { rowCount } = await client.query(this.statement(sql, values));
        // Without a guard each insert makes its row, unless the platform is gone.
        if (rowCount === 0) throw platformGone(platformId);
        return step.kind === "insert" ? rowCount : undefined;
      }
      case "guarded": {
        const { sql, values } = guardedStatement(
          step.sql,
          step.params,
          step.inserts,
          step.updates,
          step.claim,
          platformId,
        );
        const row = (await client.query(this.statement(sql, values))).rows[0] as SqlRow | undefined;
        if (row === undefined) {
          // Nothing was written: say why only when it is the platform.
          const found = await client.query(this.statement(TENANT_SQL, [platformId]));
          if (found.rows.length === 0) throw platformGone(platformId);
          return undefined;
        }
        const { tenantFound, ...guard } = row;
        if (tenantFound !== true) throw platformGone(platformId);
        return guard;
      }
      default:
        await this.beginFor(client, platformId);
        try {
          const result = await this.exec(client, step);
          await client.query("COMMIT");
          return result;
        } catch (err) {
          await client.query("ROLLBACK").catch(() => undefined);
          throw err;
        }
    }
  }

  /** BEGIN, and the platform's row under its lock, in one round trip. */
  private async beginFor(client: pg.PoolClient, platformId: string): Promise<void> {
    const sql = TENANT_SQL.replace("?", client.escapeLiteral(platformId));
    let found: boolean;
    try {
      const results = (await client.query(`BEGIN; ${sql}`)) as unknown as pg.QueryResult[];
      found = results[1]?.rows.length === 1;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    }
    if (!found) {
      await client.query("ROLLBACK");
      throw platformGone(platformId);
    }
  }

  async one(sql: string, params: readonly SqlValue[]): Promise<SqlRow | undefined> {
    const result = await this.pool.query(this.statement(sql, params.map(pgValue)));
    return result.rows[0] as SqlRow | undefined;
  }

  async all(sql: string, params: readonly SqlValue[]): Promise<SqlRow[]> {
    return (await this.pool.query(this.statement(sql, params.map(pgValue)))).rows as SqlRow[];
  }

  async transaction<R>(
    program: () => SqlProgram<R>,
    commit: SqlCommit = "transaction",
    platformId?: string,
  ): Promise<R> {
    const client = await this.pool.connect();
    const run = async (exec: (step: SqlStep) => Promise<unknown>) => {
      const steps = program();
      let input: unknown;
      for (;;) {
        const next = steps.next(input);
        if (next.done) return next.value;
        input = await exec(next.value);
      }
    };
    const inTransaction = (step: SqlStep) => this.exec(client, step);
    try {
      if (commit === "eachStep") {
        return await run(async (step) => {
          for (let attempt = 0; ; attempt++) {
            try {
              return await (platformId === undefined
                ? this.exec(client, step)
                : this.execFor(client, step, platformId));
            } catch (err) {
              // A statement of its own that lost a deadlock wrote nothing: run it again.
              if (!isDeadlock(err) || attempt >= 20) throw err;
              await pause(attempt);
            }
          }
        });
      }
      for (let attempt = 0; ; attempt++) {
        if (platformId === undefined) await client.query("BEGIN");
        else await this.beginFor(client, platformId);
        try {
          const result = await run(inTransaction);
          await client.query("COMMIT");
          return result;
        } catch (err) {
          await client.query("ROLLBACK").catch(() => undefined);
          // Chosen as a deadlock's victim: nothing of it was written, and a
          // program may be started again (see SqlDriver.transaction).
          if (!isDeadlock(err) || attempt >= 20) throw err;
          await pause(attempt);
        }
      }
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/**
 * Prisma stores DateTime as TIMESTAMP(3) holding UTC wall time (see pgValue);
 * node-postgres would read such a value as local time.
 */
const utcTimestamps = ((oid: number, format?: "text" | "binary") =>
  oid === pg.types.builtins.TIMESTAMP && format !== "binary"
    ? pgTime
    : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser;

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "SQLITE_BUSY" || code === "SQLITE_BUSY_SNAPSHOT" || code === "SQLITE_LOCKED";
}

/** PostgreSQL's deadlock victim (40P01). */
function isDeadlock(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === "40P01";
}

function pause(attempt: number): Promise<void> {
  const ms = Math.min(20, 1 + attempt) * (0.5 + Math.random());
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export interface SqliteDriverOptions {
  /**
   * How long a transaction waits for others to join its commit. 0: those
   * that arrive in the same event-loop turn. On the writer thread each
   * request arrives as a message of its own, so it waits a little: commits,
   * not statements, are what a write costs here.
   */
  gatherMs?: number;
  /**
   * 0 (the default): SQLite's automatic checkpoint, which copies the WAL into
   * the database file inside the commit that fills it, fsyncs included. N:
   * the caller runs passive checkpoints on another connection and thread
   * (sqlite-checkpoint-thread.ts); this connection only completes one after
   * every N commits, while the WAL is still, so that the WAL is reused.
   */
  completeCheckpointEvery?: number;
}

/** The SQLite driver on one database file. */
export function openSqliteDriver(file: string, options: SqliteDriverOptions = {}): SqlDriver {
  return new SqliteDriver(file, options);
}

export function openSqlDriver(target: DatabaseTarget): SqlDriver {
  return target.provider === "sqlite"
    ? new SqliteDriver(target.location)
    : new PostgresDriver(target);
}
