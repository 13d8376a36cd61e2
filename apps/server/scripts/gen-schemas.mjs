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
if (stale) process.exit(1);
