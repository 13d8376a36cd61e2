import { resolve } from "node:path";
import { PrismaBetterSQLite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient as SqliteClient } from "./generated/sqlite/client.js";
import { PrismaClient as PgClient } from "./generated/postgresql/client.js";
import { ConfigError } from "../config.js";

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

/** The URL as it may be shown: without its password. */
export function displayUrl(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  if (parsed.password === "") return url;
  parsed.password = "***";
  return parsed.toString();
}

const DATABASE_URL_FORMS =
  "must be file:<path> (SQLite) or postgresql://user@host:5432/db[?schema=name]";

export function parseDatabaseUrl(url: string): DatabaseTarget {
  if (url.startsWith("file:")) {
    const path = url.slice("file:".length).split("?")[0] ?? "";
    if (path === "") throw new ConfigError("DATABASE_URL", url, DATABASE_URL_FORMS);
    return { provider: "sqlite", location: resolve(path), schema: "main" };
  }
  if (url.startsWith("postgresql://") || url.startsWith("postgres://")) {
    if (!URL.canParse(url))
      throw new ConfigError("DATABASE_URL", "(unparsable)", DATABASE_URL_FORMS);
    const parsed = new URL(url);
    const schema = parsed.searchParams.get("schema") ?? "public";
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(schema)) {
      throw new ConfigError("DATABASE_URL", displayUrl(url), "the schema must be a plain SQL name");
    }
    parsed.searchParams.delete("schema");
    return { provider: "postgresql", location: parsed.toString(), schema };
  }
  throw new ConfigError("DATABASE_URL", displayUrl(url), DATABASE_URL_FORMS);
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
    // A busy timeout lets several processes share the file without
    // SQLITE_BUSY failures on short write bursts.
    const adapter = new PrismaBetterSQLite3({ url: `file:${target.location}`, timeout: 10_000 });
    return new SqliteClient({ adapter });
  }
  const adapter = new PrismaPg(pgPoolConfig(target), { schema: target.schema });
  return new PgClient({ adapter }) as unknown as Db;
}
