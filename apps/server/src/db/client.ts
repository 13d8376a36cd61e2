import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { ConfigError } from "../config.js";

export type Provider = "sqlite" | "postgresql";

export interface DatabaseTarget {
  provider: Provider;
  /** SQLite: absolute file path. PostgreSQL: connection string without `schema`. */
  location: string;
  /** PostgreSQL schema (search_path), from the URL's `schema` parameter. */
  schema: string;
  /**
   * PostgreSQL: the most connections one server process opens, from the
   * URL's `connection_limit` parameter (the name and default Prisma gives
   * it). SQLite: 1.
   */
  connectionLimit: number;
}

/**
 * Prisma's formula for its default pool size: twice the CPUs (as Node.js
 * counts them), plus one. The connections share the machine's cores with
 * PostgreSQL's own processes; more of them queue the same work inside
 * PostgreSQL instead of in the pool, at more of its CPU a statement
 * (bench/RESULTS.md).
 */
export const defaultConnectionLimit = (): number => availableParallelism() * 2 + 1;

/** The URL as it may be shown: without its password. */
export function displayUrl(url: string): string {
  if (!URL.canParse(url)) return url;
  const parsed = new URL(url);
  if (parsed.password === "") return url;
  parsed.password = "***";
  return parsed.toString();
}

const DATABASE_URL_FORMS =
  "must be file:<path> (SQLite) or postgresql://user@host:5432/db[?schema=name][&connection_limit=n]";

export function parseDatabaseUrl(url: string): DatabaseTarget {
  if (url.startsWith("file:")) {
    const path = url.slice("file:".length).split("?")[0] ?? "";
    if (path === "") throw new ConfigError("DATABASE_URL", url, DATABASE_URL_FORMS);
    return { provider: "sqlite", location: resolve(path), schema: "main", connectionLimit: 1 };
  }
  if (url.startsWith("postgresql://") || url.startsWith("postgres://")) {
    if (!URL.canParse(url))
      throw new ConfigError("DATABASE_URL", "(unparsable)", DATABASE_URL_FORMS);
    const parsed = new URL(url);
    const schema = parsed.searchParams.get("schema") ?? "public";
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(schema)) {
      throw new ConfigError("DATABASE_URL", displayUrl(url), "the schema must be a plain SQL name");
    }
    const limit = parsed.searchParams.get("connection_limit");
    const connectionLimit = limit === null ? defaultConnectionLimit() : Number(limit);
    if (!Number.isInteger(connectionLimit) || connectionLimit < 1) {
      throw new ConfigError(
        "DATABASE_URL",
        displayUrl(url),
        "connection_limit must be a whole number of connections, 1 or more",
      );
    }
    parsed.searchParams.delete("schema");
    parsed.searchParams.delete("connection_limit");
    return { provider: "postgresql", location: parsed.toString(), schema, connectionLimit };
  }
  throw new ConfigError("DATABASE_URL", displayUrl(url), DATABASE_URL_FORMS);
}

export function pgPoolConfig(target: DatabaseTarget) {
  return {
    connectionString: target.location,
    max: target.connectionLimit,
    options: `-c search_path=${target.schema}`,
  };
}
