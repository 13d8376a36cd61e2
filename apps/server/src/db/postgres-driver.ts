import pg from "pg";
import { pgPoolConfig, type DatabaseTarget } from "./client.js";
import {
  MAX_KEPT_STATEMENTS,
  ORDER_TABLE,
  insertSql,
  TENANT_SQL,
  pause,
  platformGone,
  updateStatement,
  type SqlCommit,
  type SqlDriver,
  type SqlInsert,
  type SqlProgram,
  type SqlRow,
  type SqlStep,
  type SqlUpdate,
  type SqlValue,
} from "./sql-steps.js";
import { pgTime, pgValue } from "./stored-values.js";

// The PostgreSQL driver: programs run asynchronously on a pooled connection,
// each step a round trip, so a guarded step and what follows from it are
// one statement (guardedStatement).

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

/** PostgreSQL's deadlock victim (40P01). */
function isDeadlock(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === "40P01";
}

/** The PostgreSQL driver on the target's database. */
export function openPostgresDriver(target: DatabaseTarget): SqlDriver {
  return new PostgresDriver(target);
}
