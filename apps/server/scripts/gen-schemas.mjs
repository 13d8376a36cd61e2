// Writes prisma/<provider>/schema.prisma from prisma/schema.base.prisma, and
// the row types of src/db/tables.ts and src/db/tables/ from the same model.
// `--check` fails when a written file is out of date (used by CI).
import { readFileSync, writeFileSync, mkdirSync, existsSync, readdirSync, rmSync } from "node:fs";
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
 * Which file of src/db/tables/ holds each model's row type: by area, so that
 * a reader finds a table beside its neighbours. A new model goes in one.
 */
const tableGroups = {
  platform: ["Platform", "ApiToken", "IdempotencyRecord", "RateLimit", "Job"],
  customers: [
    "Customer",
    "BeneficialOwner",
    "Verification",
    "KycLink",
    "Document",
    "LookupRequest",
    "BulkImportJob",
    "ContactVerificationCode",
    "Invitation",
  ],
  money: ["InternalAccount", "LedgerEntry", "ExternalAccount", "Transaction", "Quote"],
  "wallet-auth": ["AuthMethod", "AuthSession", "SignedChallenge"],
  webhooks: ["WebhookEvent", "EventOrder", "WebhookAttempt"],
  agents: ["Agent", "AgentAction", "AgentAccessToken"],
  cards: ["Card", "CardTransaction", "CardTransactionEvent", "CardRevealToken", "DelegatedKey"],
  stablecoins: ["StablecoinProviderAccount", "Stablecoin", "StablecoinOperation"],
  sca: ["ScaFactor", "ScaChallenge", "ScaLoginState", "ScaFactorReset"],
};

const GENERATED = `// Generated from prisma/schema.base.prisma by scripts/gen-schemas.mjs: do not edit.`;

/**
 * The row types of the query layer, from the same model: one interface per
 * model, in its area's file (src/db/tables/<group>.ts, see tableGroups); the
 * `Tables` map Kysely is typed with, and the kind of every column whose
 * stored form differs from its value (decoded on read by db/query.ts), in
 * src/db/tables.ts, which also re-exports every row type. Column names share
 * one kind across all models, so a row can be decoded without knowing its
 * table; a clash fails here. Returns each file's text by its path under src/db.
 */
function tablesModules(schema) {
  const tsType = {
    String: "string",
    Int: "number",
    BigInt: "bigint",
    Boolean: "boolean",
    DateTime: "Date",
  };
  const kindOf = { Int: "int", BigInt: "bigint", Boolean: "boolean", DateTime: "date" };
  const models = new Map();
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
    models.set(name, columns);
  }
  const groupOf = new Map();
  for (const [group, names] of Object.entries(tableGroups)) {
    for (const name of names) {
      if (!models.has(name)) throw new Error(`tableGroups.${group}: no model ${name}`);
      if (groupOf.has(name)) throw new Error(`model ${name} is in two table groups`);
      groupOf.set(name, group);
    }
  }
  for (const name of models.keys()) {
    if (!groupOf.has(name)) throw new Error(`model ${name} is in no table group (tableGroups)`);
  }

  const files = new Map();
  for (const [group, names] of Object.entries(tableGroups)) {
    const interfaces = names.map(
      (name) => `export interface ${name} {\n${models.get(name).join("\n")}\n}`,
    );
    const usesGenerated = names.some((name) =>
      models.get(name).some((column) => column.includes("Generated<")),
    );
    const imports = usesGenerated ? `import type { Generated } from "kysely";\n\n` : "";
    files.set(`tables/${group}.ts`, `${GENERATED}\n${imports}${interfaces.join("\n\n")}\n`);
  }
  const decoded = [...kinds]
    .filter(([, kind]) => kind !== "string")
    .sort(([a], [b]) => a.localeCompare(b));
  const groups = Object.keys(tableGroups);
  const alias = (group) => group.replace(/-(\w)/g, (_, c) => c.toUpperCase());
  files.set(
    "tables.ts",
    `${GENERATED}
// Every table's row type (by area, in tables/), the \`Tables\` map Kysely is
// typed with, and the stored form of columns.
${groups.map((g) => `import type * as ${alias(g)} from "./tables/${g}.js";`).join("\n")}

${groups.map((g) => `export type * from "./tables/${g}.js";`).join("\n")}

export interface Tables {
${[...models.keys()].map((name) => `  ${name}: ${alias(groupOf.get(name))}.${name};`).join("\n")}
}

/** Columns whose stored form is not their value, by name (the same in every table). */
export const columnKinds: Readonly<Record<string, "int" | "bigint" | "boolean" | "date">> = {
${decoded.map(([column, kind]) => `  ${column}: "${kind}",`).join("\n")}
};
`,
  );
  return files;
}

const dbDir = join(root, "src/db");
const tablesFiles = tablesModules(base);
// A group file that is no longer written is stale too.
const tablesDir = join(dbDir, "tables");
const written = new Set([...tablesFiles.keys()].map((path) => join(dbDir, path)));
const leftOver = existsSync(tablesDir)
  ? readdirSync(tablesDir)
      .map((name) => join(tablesDir, name))
      .filter((file) => !written.has(file))
  : [];
if (check) {
  for (const [path, text] of tablesFiles) {
    const file = join(dbDir, path);
    if (!existsSync(file) || readFileSync(file, "utf8") !== text) {
      console.error(`${file} is stale: run npm run db:schemas`);
      stale = true;
    }
  }
  for (const file of leftOver) {
    console.error(`${file} is no longer generated: run npm run db:schemas`);
    stale = true;
  }
} else {
  mkdirSync(tablesDir, { recursive: true });
  for (const [path, text] of tablesFiles) writeFileSync(join(dbDir, path), text);
  for (const file of leftOver) rmSync(file);
}
if (stale) process.exit(1);
