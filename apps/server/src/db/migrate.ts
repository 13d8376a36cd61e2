import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import type { DatabaseTarget, Provider } from "./client.js";
import type { SqlProgram } from "./sql.js";
import { displayUrl, pgPoolConfig } from "./client.js";
import { ConfigError } from "../config.js";

// Applies the checked-in SQL migrations at start-up. `prisma migrate deploy`
// cannot run against PostgreSQL on our machines, so the server does it itself,
// recording what it applied. Safe when several processes start at once: a
// PostgreSQL advisory lock (or SQLite's write lock) serialises them.

const MIGRATIONS_TABLE = "_sandbox_migrations";
const LOCK_KEY = 734_120_551;

/**
 * The first step of a transaction that must not run beside another process's
 * start-up (creating the first platform): it waits for the lock migrations
 * hold. On PostgreSQL that is the same advisory lock, released at commit. On
 * SQLite every write transaction of the driver begins IMMEDIATE, which takes
 * the database's write lock before the first statement: nothing to add.
 */
export function* takeStartupLock(provider: Provider): SqlProgram<void> {
  if (provider === "postgresql") {
    yield { kind: "one", sql: "SELECT pg_advisory_xact_lock(?)", params: [LOCK_KEY] };
  }
}

export interface Migration {
  name: string;
  sql: string;
}

export function migrationsDir(provider: DatabaseTarget["provider"]): string {
  const here = dirname(fileURLToPath(import.meta.url));
  // src/db or dist/db -> ../../prisma/<provider>/migrations
  return join(here, "..", "..", "prisma", provider, "migrations");
}

export function loadMigrations(provider: DatabaseTarget["provider"]): Migration[] {
  const dir = migrationsDir(provider);
  if (!existsSync(dir)) throw new Error(`migrations folder missing: ${dir}`);
  return readdirSync(dir)
    .filter((name) => /^\d{4}_/.test(name))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(dir, name, "migration.sql"), "utf8") }));
}

/** The database named by DATABASE_URL cannot be reached or opened: a setting to fix. */
function cannotOpen(url: string, err: unknown): ConfigError {
  const e = err as { code?: string; message?: string };
  const cause = [e.code, e.message].filter((part) => part).join(": ");
  return new ConfigError("DATABASE_URL", displayUrl(url), `cannot open the database (${cause})`);
}

/**
 * Applies the migrations not applied yet. `migrations` (all of them unless
 * given) lets a test stop at an older schema to check a later migration's
 * carry-over of existing rows.
 */
export async function migrate(
  target: DatabaseTarget,
  migrations: Migration[] = loadMigrations(target.provider),
): Promise<string[]> {
  return target.provider === "sqlite"
    ? migrateSqlite(target.location, migrations)
    : migratePostgres(target, migrations);
}

function migrateSqlite(file: string, migrations: Migration[]): string[] {
  let db: Database.Database;
  try {
    // The default path (./data/sandbox.db) is in a folder git does not keep.
    mkdirSync(dirname(file), { recursive: true });
    db = new Database(file, { timeout: 10_000 });
  } catch (err) {
    throw cannotOpen(`file:${file}`, err);
  }
  try {
    // WAL lets readers run beside the writer; it is a property of the file.
    db.pragma("journal_mode = WAL");
    db.exec(
      `CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}" (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)`,
    );
    const applied: string[] = [];
    const run = db.transaction(() => {
      const done = new Set(
        (db.prepare(`SELECT name FROM "${MIGRATIONS_TABLE}"`).all() as { name: string }[]).map(
          (r) => r.name,
        ),
      );
      for (const m of migrations) {
        if (done.has(m.name)) continue;
        db.exec(m.sql);
        db.prepare(`INSERT INTO "${MIGRATIONS_TABLE}" (name, applied_at) VALUES (?, ?)`).run(
          m.name,
          new Date().toISOString(),
        );
        applied.push(m.name);
      }
    });
    run.immediate();
    return applied;
  } finally {
    db.close();
  }
}

async function migratePostgres(target: DatabaseTarget, migrations: Migration[]): Promise<string[]> {
  const client = new pg.Client(pgPoolConfig(target));
  try {
    await client.connect();
  } catch (err) {
    throw cannotOpen(target.location, err);
  }
  try {
    await client.query("SELECT pg_advisory_lock($1)", [LOCK_KEY]);
    try {
      // Under the lock: two CREATE SCHEMA IF NOT EXISTS at once can still
      // collide on PostgreSQL's catalog (a unique violation).
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${target.schema}"`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}" (name TEXT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL)`,
      );
      const done = new Set(
        (await client.query<{ name: string }>(`SELECT name FROM "${MIGRATIONS_TABLE}"`)).rows.map(
          (r) => r.name,
        ),
      );
      const applied: string[] = [];
      for (const m of migrations) {
        if (done.has(m.name)) continue;
        await client.query("BEGIN");
        try {
          // Prisma's diff starts with CREATE SCHEMA "public"; tables land in
          // the first schema of search_path, which is the configured one.
          await client.query(m.sql);
          await client.query(
            `INSERT INTO "${MIGRATIONS_TABLE}" (name, applied_at) VALUES ($1, now())`,
            [m.name],
          );
          await client.query("COMMIT");
        } catch (err) {
          await client.query("ROLLBACK");
          throw err;
        }
        applied.push(m.name);
      }
      return applied;
    } finally {
      await client.query("SELECT pg_advisory_unlock($1)", [LOCK_KEY]);
    }
  } finally {
    await client.end();
  }
}
