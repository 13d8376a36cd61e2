// Writes prisma/<provider>/schema.prisma from prisma/schema.base.prisma.
// `--check` fails when a written file is out of date (used by CI).
import { readFileSync, writeFileSync, mkdirSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const base = readFileSync(join(root, "prisma/schema.base.prisma"), "utf8");
const check = process.argv.includes("--check");
let stale = false;

for (const provider of ["sqlite", "postgresql"]) {
  const header = `// Generated from schema.base.prisma by scripts/gen-schemas.mjs: do not edit.

// Nothing is generated from this block (row types come from src/db/tables.ts,
// queries run through src/db/database.ts): it tells the Prisma CLI, which
// writes the migrations, to use its JavaScript engine.
generator client {
  provider        = "prisma-client"
  output          = "../../src/db/generated/${provider}"
  engineType      = "client"
  moduleFormat    = "esm"
}

datasource db {
  provider = "${provider}"
  url      = env("DATABASE_URL")
}
`;
  const file = join(root, "prisma", provider, "schema.prisma");
  const text = header + "\n" + base;
  if (check) {
    if (!existsSync(file) || readFileSync(file, "utf8") !== text) {
      console.error(`${file} is stale: run npm run db:schemas`);
      stale = true;
    }
  } else {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}
/**
 * The row types of the query layer (src/db/tables.ts), from the same model:
 * one interface per model, the `Tables` map Kysely is typed with, and the
 * kind of every column whose stored form differs from its value (decoded on
 * read by db/rows.ts). Column names share one kind across all models, so a
 * row can be decoded without knowing its table; a clash fails here.
 */
function tablesModule(schema) {
  const tsType = {
    String: "string",
    Int: "number",
    BigInt: "bigint",
    Boolean: "boolean",
    DateTime: "Date",
  };
  const kindOf = { Int: "int", BigInt: "bigint", Boolean: "boolean", DateTime: "date" };
  const models = [];
  const kinds = new Map();
  for (const [, name, body] of schema.matchAll(/^model (\w+) \{\n([\s\S]*?)^\}/gm)) {
    const columns = [];
    for (const line of body.split("\n")) {
      const field = /^\s+(\w+)\s+(\w+)(\?)?(.*)$/.exec(line);
      if (!field || line.trim().startsWith("//")) continue;
      const [, column, type, optional, rest] = field;
      if (!(type in tsType)) throw new Error(`${name}.${column}: type ${type} has no column type`);
      const kind = kindOf[type] ?? "string";
      const known = kinds.get(column);
      if (known !== undefined && known !== kind) {
        throw new Error(`column ${column} is ${known} in one model and ${kind} in ${name}`);
      }
      kinds.set(column, kind);
      let ts = tsType[type] + (optional ? " | null" : "");
      // A database default: may be left out of an insert.
      if (rest.includes("@default(")) ts = `Generated<${ts}>`;
      columns.push(`  ${column}: ${ts};`);
    }
    models.push({ name, columns });
  }
  const decoded = [...kinds]
    .filter(([, kind]) => kind !== "string")
    .sort(([a], [b]) => a.localeCompare(b));
  return `// Generated from prisma/schema.base.prisma by scripts/gen-schemas.mjs: do not edit.
import type { Generated } from "kysely";

${models.map((m) => `export interface ${m.name} {\n${m.columns.join("\n")}\n}`).join("\n\n")}

export interface Tables {
${models.map((m) => `  ${m.name}: ${m.name};`).join("\n")}
}

/** Columns whose stored form is not their value, by name (the same in every table). */
export const columnKinds: Readonly<Record<string, "int" | "bigint" | "boolean" | "date">> = {
${decoded.map(([column, kind]) => `  ${column}: "${kind}",`).join("\n")}
};
`;
}

const tablesFile = join(root, "src/db/tables.ts");
const tablesText = tablesModule(base);
if (check) {
  if (!existsSync(tablesFile) || readFileSync(tablesFile, "utf8") !== tablesText) {
    console.error(`${tablesFile} is stale: run npm run db:schemas`);
    stale = true;
  }
} else {
  writeFileSync(tablesFile, tablesText);
}
if (stale) process.exit(1);
