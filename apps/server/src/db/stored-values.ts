import type { SqlRow, SqlValue } from "./sql-steps.js";

// The storage formats, as Prisma's migrations define them: DateTime as text
// on SQLite and TIMESTAMP(3) UTC on PostgreSQL, BigInt as integers; values
// are written in them and times read back from them.

/** Prisma's SQLite DateTime format. */
export function sqliteValue(value: SqlValue): SqlValue {
  if (value instanceof Date) return value.toISOString().replace("Z", "+00:00");
  if (typeof value === "boolean") return value ? 1 : 0;
  return value;
}

/** Prisma's PostgreSQL DateTime format: UTC wall time for TIMESTAMP(3). */
export function pgValue(value: SqlValue): unknown {
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
export function pgTime(text: string): Date {
  const iso = `${text.replace(" ", "T")}Z`;
  return iso.length === 24 ? new StoredTime(iso) : new Date(iso);
}

/** A row read as an array, as the object the driver's callers take. */
export function rowObject(names: readonly string[], values: readonly unknown[]): SqlRow {
  const row: SqlRow = {};
  for (let i = 0; i < names.length; i++) row[names[i]!] = values[i];
  return row;
}
