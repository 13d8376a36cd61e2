import { resolve } from "node:path";
import { ConfigError } from "../config.js";

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
