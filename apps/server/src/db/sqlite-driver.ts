import Database from "better-sqlite3";
import { keptBy } from "../kept.js";
import {
  KEY_SHARE,
  MAX_KEPT_STATEMENTS,
  ORDER_TABLE,
  SKIP_LOCKED,
  forTenant,
  insertSql,
  pause,
  updateStatement,
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
import { rowObject, sqliteTime, sqliteValue } from "./stored-values.js";

// The SQLite driver: programs run synchronously (better-sqlite3 is
// synchronous: the write lock is never held across an await, so this thread
// never waits on it for another of its own connections).
//
// The commit costs more than the statements, so transactions that arrive
// together are committed together (group commit): each runs in its own
// savepoint, in arrival order, inside one write transaction. A program that
// fails rolls back only its savepoint; the others still commit.

/** The statement as SQLite takes it: without PostgreSQL's row locks. */
function withoutRowLocks(sql: string): string {
  return sql.replaceAll(SKIP_LOCKED, "").replaceAll(KEY_SHARE, "");
}

interface Queued {
  program: () => SqlProgram<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}
type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };
/** Most transactions committed together. */
const MAX_GROUP = 256;

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

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "SQLITE_BUSY" || code === "SQLITE_BUSY_SNAPSHOT" || code === "SQLITE_LOCKED";
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
