import type { Compilable } from "kysely";
import type { DatabaseTarget, Provider } from "./client.js";
import { decodeRow, decodeRows, run, statement, type BatchedRead } from "./query.js";
import { openSqlDriver, type SqlCommit, type SqlDriver, type SqlProgram } from "./sql.js";
import type { SqlProgramRef } from "./sql-programs.js";
import { inlineSqlRunner, type SqlRunner } from "./sql-runner.js";
import { currentTenant, tenantError } from "./tenant.js";
import { TurnBatch } from "./turn-batch.js";

/**
 * The sandbox's data access: reads, write transactions written as programs
 * of typed steps (query.ts), and the programs defined to run on the
 * SQLite writer thread (sql-programs.ts). Every area goes through this one object.
 */
export class Database {
  /** Each batched read's waiting callers (the map's value is the read's own TurnBatch<K, O>). */
  private readonly batches = new Map<object, unknown>();

  constructor(
    private readonly driver: SqlDriver,
    private readonly runner: SqlRunner,
  ) {}

  /** A Database on connections of its own, in this thread (tests and tools). */
  static open(target: DatabaseTarget): Database {
    const driver = openSqlDriver(target);
    return new Database(driver, inlineSqlRunner(driver));
  }

  /** Lets the programs already sent finish, then closes the connections. */
  async close(): Promise<void> {
    await this.runner.close();
    await this.driver.close();
  }

  get provider(): Provider {
    return this.driver.provider;
  }

  /** One read outside any transaction: the first row, decoded, or undefined. */
  async one<O>(query: Compilable<O>): Promise<O | undefined> {
    const { sql, params } = statement(query);
    const row = await this.driver.one(sql, params);
    return row === undefined ? undefined : decodeRow<O>(row);
  }

  /** One read outside any transaction: every row, decoded. */
  async all<O>(query: Compilable<O>): Promise<O[]> {
    const { sql, params } = statement(query);
    return decodeRows<O>(await this.driver.all(sql, params));
  }

  /**
   * The row of `key`, or undefined. On PostgreSQL, read in one statement
   * with the other reads of `read` asked for in this turn of the event loop
   * (TurnBatch): there a read is a round trip. On SQLite a read is a call
   * into the library, and waiting for the turn's end would only add a hop.
   */
  async batched<K extends Record<string, string>, O>(
    read: BatchedRead<K, O>,
    key: K,
  ): Promise<O | undefined> {
    // No row has a NUL in its key, and PostgreSQL refuses one in text: that
    // error would fail every read of the batch, not only this one.
    if (read.parts.some((part) => key[part]!.includes("\u0000"))) return undefined;
    if (this.driver.provider === "sqlite") return this.one(read.statement([key]));
    let batch = this.batches.get(read) as TurnBatch<K, O> | undefined;
    if (batch === undefined) {
      const id = (of: Record<string, unknown>) =>
        read.parts.map((part) => String(of[part])).join("\u0000");
      batch = new TurnBatch<K, O>(id, async (keys) => {
        const rows = await this.all(read.statement(keys));
        return new Map(rows.map((row) => [id(row as Record<string, unknown>), row]));
      });
      this.batches.set(read, batch);
    }
    return batch.read(key);
  }

  /**
   * Runs the program's steps as one write transaction: all or nothing. The
   * program may be started again after contention, so it must not act on
   * the world (only yield steps) until it returns.
   */
  transaction<R>(program: () => SqlProgram<R>, commit?: SqlCommit): Promise<R> {
    const platformId = currentTenant();
    if (platformId === undefined) return this.driver.transaction(program, commit);
    return this.driver
      .transaction(program, commit, platformId)
      .catch((err: unknown) => Promise.reject(tenantError(err)));
  }

  /** One write statement as a transaction of its own: the number of rows it changed. */
  execute(query: Compilable<unknown>): Promise<number> {
    return this.transaction(() => run(query), "eachStep");
  }

  /** A program defined for the writer thread (sql-programs.ts): on SQLite it may run there. */
  program<I, R>(program: SqlProgramRef<I, R>, input: NoInfer<I>): Promise<R> {
    const platformId = currentTenant();
    if (platformId === undefined) return this.runner.run(program, input);
    return this.runner
      .run(program, input, platformId)
      .catch((err: unknown) => Promise.reject(tenantError(err)));
  }
}
