import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient as SqliteClient } from "./generated/sqlite/client.js";
import { PrismaClient as PgClient } from "./generated/postgresql/client.js";

// Both generated clients come from the same data model, so they share one
// API; the SQLite one's type stands for both.
export type Db = SqliteClient;
export type Tx = Parameters<Parameters<Db["$transaction"]>[0]>[0];
export type Provider = "sqlite" | "postgresql";

export interface DatabaseTarget {
  provider: Provider;
  /** SQLite: absolute file path. PostgreSQL: connection string without `schema`. */
  location: string;
  /** PostgreSQL schema (search_path), from the URL's `schema` parameter. */
  schema: string;
}

export function parseDatabaseUrl(url: string): DatabaseTarget {
  if (url.startsWith("file:")) {
    const path = url.slice("file:".length).split("?")[0] ?? "";
    if (path === "") throw new Error("DATABASE_URL file: needs a path");
    return { provider: "sqlite", location: resolve(path), schema: "main" };
  }
  if (url.startsWith("postgresql://") || url.startsWith("postgres://")) {
    const parsed = new URL(url);
    const schema = parsed.searchParams.get("schema") ?? "public";
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
    parsed.searchParams.delete("schema");
    return { provider: "postgresql", location: parsed.toString(), schema };
  }
  throw new Error("DATABASE_URL must start with file: or postgresql://");
}

export function pgPoolConfig(target: DatabaseTarget, max = 10) {
  return {
    connectionString: target.location,
    max,
    options: `-c search_path=${target.schema}`,
  };
}

export function createDb(target: DatabaseTarget): Db {
  if (target.provider === "sqlite") {
    mkdirSync(dirname(target.location), { recursive: true });
    // A busy timeout lets several processes share the file without
    // SQLITE_BUSY failures on short write bursts.
    const adapter = new PrismaBetterSQLite3({ url: `file:${target.location}`, timeout: 10_000 });
    return new SqliteClient({ adapter });
  }
  const adapter = new PrismaPg(pgPoolConfig(target), { schema: target.schema });
  return new PgClient({ adapter }) as unknown as Db;
}
