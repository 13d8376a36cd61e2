// Migration files for both databases, made from the Prisma schema.
//
//   node scripts/db-migrations.mjs new <name>   write the next migration for sqlite and postgresql
//   node scripts/db-migrations.mjs check        fail if the schema changed without a migration
//
// Each migration folder keeps a snapshot of the schema it leads to, so the next
// diff is computed schema-to-schema and needs no database (the server applies
// the SQL itself at start-up: see src/db/migrate.ts).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, copyFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const urls = {
  sqlite: `file:${join(tmpdir(), "sandbox-prisma-cli.db")}`,
  postgresql: "postgresql://postgres@127.0.0.1:5432/postgres",
};
const [command, name] = process.argv.slice(2);

function diff(provider, fromSnapshot) {
  const schema = join(root, "prisma", provider, "schema.prisma");
  const from = fromSnapshot ? ["--from-schema-datamodel", fromSnapshot] : ["--from-empty"];
  const out = execFileSync(
    "npx",
    [
      "prisma",
      "migrate",
      "diff",
      ...from,
      "--to-schema-datamodel",
      schema,
      "--script",
      "--config",
      join(root, "prisma", `${provider}.config.ts`),
    ],
    {
      cwd: root,
      env: { ...process.env, DATABASE_URL: urls[provider] },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  return out;
}

function migrationsOf(provider) {
  const dir = join(root, "prisma", provider, "migrations");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((d) => /^\d{4}_/.test(d))
    .sort();
}

const isEmpty = (sql) => sql.trim() === "" || sql.includes("This is an empty migration");
let failed = false;
for (const provider of ["sqlite", "postgresql"]) {
  const existing = migrationsOf(provider);
  const last = existing.at(-1);
  const snapshot = last
    ? join(root, "prisma", provider, "migrations", last, "schema.prisma")
    : undefined;
  const sql = diff(provider, snapshot);
  if (command === "check") {
    if (!isEmpty(sql)) {
      console.error(
        `${provider}: schema differs from the last migration; run: npm run db:migration -- <name>`,
      );
      failed = true;
    }
  } else if (command === "new") {
    if (!name || !/^[a-z0-9_]+$/.test(name)) throw new Error("usage: new <snake_case_name>");
    if (isEmpty(sql)) {
      console.warn(`${provider}: no schema change, nothing written`);
      continue;
    }
    const folder = join(
      root,
      "prisma",
      provider,
      "migrations",
      `${String(existing.length + 1).padStart(4, "0")}_${name}`,
    );
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, "migration.sql"), sql.replace(/^.*Loaded Prisma config.*\n/m, ""));
    copyFileSync(join(root, "prisma", provider, "schema.prisma"), join(folder, "schema.prisma"));
    console.warn(`${provider}: wrote ${folder}`);
  } else {
    throw new Error("usage: db-migrations.mjs new <name> | check");
  }
}
if (failed) process.exit(1);
