import {
  DummyDriver,
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  ValueNode,
  type Compilable,
  type CompiledQuery,
  type Insertable,
  type LimitNode,
  type Selectable,
  type Updateable,
  sql,
  type RawBuilder,
  type SqlBool,
} from "kysely";
import {
  sqliteTime,
  type SqlInsert,
  type SqlProgram,
  type SqlRow,
  type SqlUpdate,
  type SqlValue,
} from "./sql.js";
import { columnKinds, type Tables } from "./tables.js";
import { padded } from "./turn-batch.js";

// The one way the sandbox reads and writes: statements are built, typed from
// the Prisma schema (tables.ts), by Kysely, and run by the SQL driver
// (sql.ts), which owns the connections, transactions and group commit.
// Kysely never executes anything; it only turns a typed builder into SQL
// text and parameters. Its SQLite dialect is written for both databases:
// the driver turns `?` into `$n` on PostgreSQL, and the statements use
// nothing else that differs (quoted identifiers, standard clauses).

/**
 * Kysely's SQLite compiler, with a number LIMIT written into the statement
 * instead of bound. SQLite (3.49 here) takes a bound LIMIT's value into its
 * plan, and so prepares the statement again each time it runs: a page of 2
 * customers took 27 µs with `LIMIT ?` against 12 µs with `LIMIT 2`
 * (better-sqlite3, in a loop), and the read of a 20-customer page in the
 * server 144 µs against 79. A list's limit is an integer the validator
 * checked (or a constant), so each page size is a statement of its own.
 */
class StatementCompiler extends SqliteQueryCompiler {
  protected override visitLimit(node: LimitNode): void {
    const limit = node.limit;
    if (ValueNode.is(limit) && Number.isSafeInteger(limit.value)) {
      this.append(`limit ${limit.value as number}`);
    } else {
      super.visitLimit(node);
    }
  }
}

/** Builds typed statements for the driver to run. */
export const q = new Kysely<Tables>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new StatementCompiler(),
  },
});

export type TableName = keyof Tables;
/** A row as read, with every column decoded. */
export type Row<T extends TableName> = { [C in keyof Tables[T]]: Unwrap<Tables[T][C]> };
type Unwrap<V> = V extends { __select__: infer S } ? S : V;

/** A statement as the driver takes it. */
export interface Statement {
  sql: string;
  params: readonly SqlValue[];
}

export function statement(query: Compilable<unknown>): Statement {
  const compiled = query.compile();
  return { sql: compiled.sql, params: compiled.parameters as readonly SqlValue[] };
}

type Kind = (typeof columnKinds)[string];

function decode(kind: Kind, value: unknown): unknown {
  if (value === null || value === undefined) return value;
  switch (kind) {
    case "int":
      return Number(value);
    case "bigint":
      return typeof value === "bigint" ? value : BigInt(value as string | number);
    case "boolean":
      return value === true || value === 1 || value === 1n;
    case "date":
      return value instanceof Date ? value : sqliteTime(value as string);
  }
}

/**
 * A row as the driver returned it, with each column given its value's type
 * (SQLite returns text for dates and bigints for every integer; PostgreSQL
 * text for BIGINT). Columns that are not the schema's (aliases) are left as
 * they are.
 */
export function decodeRow<O>(row: SqlRow): O {
  return decodeRows<O>([row])[0]!;
}

/**
 * Rows of one statement, decoded as decodeRow does. They share their
 * columns, so which columns need decoding is looked up once, from the first.
 */
export function decodeRows<O>(rows: SqlRow[]): O[] {
  const first = rows[0];
  if (first === undefined) return [];
  const decoded: [string, Kind][] = [];
  for (const column in first) {
    const kind = columnKinds[column];
    if (kind !== undefined) decoded.push([column, kind]);
  }
  for (const row of rows) {
    for (const [column, kind] of decoded) row[column] = decode(kind, row[column]);
  }
  return rows as O[];
}

/**
 * A statement built and compiled once, for the paths every request takes
 * (its API token, its platform's clock): each call only supplies the
 * arguments. `build` must use every argument as a value, never to decide the
 * statement's shape; the first call checks that each one lands in a parameter.
 */
export function prepared<A extends Record<string, SqlValue>, O>(
  build: (args: A) => Compilable<O>,
): (args: A) => Compilable<O> {
  let shape: { compiled: CompiledQuery<O>; slots: ({ arg: keyof A } | { value: unknown })[] };
  return (args) => ({
    compile() {
      shape ??= shapeOf(build, Object.keys(args));
      return {
        ...shape.compiled,
        parameters: shape.slots.map((slot) => ("arg" in slot ? args[slot.arg] : slot.value)),
      };
    },
  });
}

function shapeOf<A extends Record<string, SqlValue>, O>(
  build: (args: A) => Compilable<O>,
  names: readonly string[],
) {
  const marker = (name: string) => `\u0000prepared:${name}`;
  const markers = Object.fromEntries(names.map((name) => [name, marker(name)])) as A;
  const compiled = build(markers).compile();
  const byMarker = new Map(names.map((name) => [marker(name), name]));
  const slots = compiled.parameters.map((value) => {
    const arg = typeof value === "string" ? byMarker.get(value) : undefined;
    return arg === undefined ? { value } : { arg: arg as keyof A };
  });
  for (const name of names) {
    if (!slots.some((slot) => "arg" in slot && slot.arg === name)) {
      throw new Error(`prepared statement: argument ${name} is not a parameter of ${compiled.sql}`);
    }
  }
  return { compiled, slots };
}

/**
 * A read of one row per key that the requests of one event-loop turn make
 * together, as one statement (Database.batched): for the reads every request
 * or every login leg makes. A key is a few text values (`parts`), and the
 * row found for it carries them in its columns of the same names.
 */
export interface BatchedRead<K extends Record<string, string>, O> {
  readonly parts: readonly (keyof K & string)[];
  /** The statement for these keys, padded so that it is one of a few, each compiled once. */
  statement(keys: readonly K[]): Compilable<O>;
}

/**
 * A {@link BatchedRead} of the rows whose `columns` (key part → column)
 * equal a key: `build` makes the statement around the condition it is given
 * (see {@link keyIn}), for any number of keys, each compiled once per size.
 */
export function batchedRead<C extends Record<string, string>, O>(
  columns: C,
  build: (where: RawBuilder<SqlBool>) => Compilable<O>,
): BatchedRead<{ [P in keyof C]: string }, O> {
  type K = { [P in keyof C]: string };
  const parts = Object.keys(columns) as (keyof C & string)[];
  const bySize = new Map<number, (args: Record<string, string>) => Compilable<O>>();
  const arg = (part: string, i: number) => `${part}${i}`;
  return {
    parts,
    statement(keys) {
      const all = padded(keys);
      let read = bySize.get(all.length);
      if (read === undefined) {
        read = prepared((args: Record<string, string>) =>
          build(
            keyIn<K>(
              columns,
              all.map(
                (_, i) => Object.fromEntries(parts.map((part) => [part, args[arg(part, i)]])) as K,
              ),
            ),
          ),
        );
        bySize.set(all.length, read);
      }
      return read(
        Object.fromEntries(all.flatMap((key, i) => parts.map((part) => [arg(part, i), key[part]]))),
      );
    },
  };
}

/**
 * The rows whose columns equal one of the keys, every part of it: for one
 * key `column = ? AND ...`, for more `(column, ...) IN (VALUES (?, ...),
 * ...)` (the form both databases take). One key is most reads on SQLite,
 * where the list form cost 43 µs a read against 4 for the equality (a
 * 20,000-row table, by primary key).
 */
function keyIn<K extends Record<string, string>>(
  columns: { [P in keyof K]: string },
  keys: readonly K[],
): RawBuilder<SqlBool> {
  const parts = Object.keys(columns) as (keyof K)[];
  if (keys.length === 1) {
    const key = keys[0]!;
    return sql<SqlBool>`${sql.join(
      parts.map((part) => sql`${sql.ref(columns[part])} = ${key[part]}`),
      sql` and `,
    )}`;
  }
  const refs = sql.join(parts.map((part) => sql.ref(columns[part])));
  const rows = keys.map((key) => sql`(${sql.join(parts.map((part) => key[part]))})`);
  return sql<SqlBool>`(${refs}) in (values ${sql.join(rows)})`;
}

/** A count (COUNT(*) as `count`), whichever driver read it. */
export function countOf(row: SqlRow | { count: unknown } | undefined): number {
  return row === undefined ? 0 : Number((row as { count: unknown }).count);
}

// The steps of a write transaction (see SqlDriver.transaction), typed by the
// statement they run: `const row = yield* one(q.selectFrom(...))`.

/** The first row, or undefined. */
export function* one<O>(query: Compilable<O>): SqlProgram<O | undefined> {
  const row = (yield { kind: "one", ...statement(query) }) as SqlRow | undefined;
  return row === undefined ? undefined : decodeRow<O>(row);
}

/** The first row; a row another row refers to, so its absence is a bug (thrown). */
export function* found<O>(query: Compilable<O>, what: string): SqlProgram<O> {
  const row = yield* one(query);
  if (row === undefined) throw new Error(`${what} not found`);
  return row;
}

/** Every row. */
export function* all<O>(query: Compilable<O>): SqlProgram<O[]> {
  const rows = (yield { kind: "all", ...statement(query) }) as SqlRow[];
  return decodeRows<O>(rows);
}

/** The number of rows the statement changed. */
export function* run(query: Compilable<unknown>): SqlProgram<number> {
  return Number(yield { kind: "run", ...statement(query) });
}

/**
 * Inserts `rows` only if `guard` (a write with RETURNING) returns a row, as
 * one step: on PostgreSQL one statement. The guard's row, or undefined with
 * nothing written.
 */
export function* guarded<O>(
  guard: Compilable<O>,
  rows: readonly SqlInsert[],
): SqlProgram<O | undefined> {
  const row = (yield { kind: "guarded", ...statement(guard), inserts: rows }) as SqlRow | undefined;
  return row === undefined ? undefined : decodeRow<O>(row);
}

/**
 * {@link guarded}, with `updates` as well as inserts, and where the writes
 * may also need `claim` (an update) to change a row, e.g. to use up a
 * one-time code that only one request may use; the claim is made once the
 * guard returned a row. As one step: on PostgreSQL one statement. Undefined
 * when the guard returned no row (nothing written); else whether the writes
 * were made (without a claim, always; with one, when it changed a row).
 */
export function* guardedClaim(
  guard: Compilable<unknown>,
  claim: SqlUpdate | undefined,
  rows: readonly SqlInsert[],
  updates: readonly SqlUpdate[] = [],
): SqlProgram<boolean | undefined> {
  const step = { kind: "guarded" as const, ...statement(guard), inserts: rows, updates, claim };
  const row = (yield step) as SqlRow | undefined;
  if (row === undefined) return undefined;
  return claim === undefined || row.claimed === true;
}

/** An update for a guarded step, typed by its table: `set` on the rows equal to `where`. */
export function updateOf<T extends TableName>(
  table: T,
  set: Updateable<Tables[T]>,
  where: Partial<Selectable<Tables[T]>>,
): SqlUpdate {
  return {
    table,
    set: set as Record<string, SqlValue>,
    where: where as Record<string, SqlValue>,
  };
}

/** A row to insert, typed by its table (for `insert`, and the driver's guarded steps). */
export function rowOf<T extends TableName>(table: T, row: Insertable<Tables[T]>): SqlInsert {
  return { table, row: row as Record<string, SqlValue> };
}

/** Inserts one row. */
export function* insert<T extends TableName>(
  table: T,
  row: Insertable<Tables[T]>,
): SqlProgram<void> {
  yield { kind: "insert", ...rowOf(table, row) };
}

/** Inserts rows that do not read each other, as one step (one statement on PostgreSQL). */
export function* insertAll(rows: readonly SqlInsert[]): SqlProgram<void> {
  if (rows.length > 0) yield { kind: "insertAll", inserts: rows };
}
