// Fails when packages/client/src/generated/api.ts is not what openapi.yaml
// generates today, so the types server and client compile against never drift.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const committed = join(root, "packages/client/src/generated/api.ts");
const fresh = join(mkdtempSync(join(tmpdir(), "api-types-")), "api.ts");
// The client's own `generate` script, run from the same folder, writing to a
// scratch file instead (the repository's lint configuration, with its ignore
// file, is applied by `redocly lint`, not here).
const clientDir = join(root, "packages/client");
const generate = JSON.parse(readFileSync(join(clientDir, "package.json"), "utf8")).scripts.generate;
const args = generate.split(/\s+/);
args[args.indexOf("-o") + 1] = fresh;
execFileSync("npx", args, { cwd: clientDir, stdio: ["ignore", "ignore", "inherit"] });
if (readFileSync(fresh, "utf8") !== readFileSync(committed, "utf8")) {
  console.error(
    "packages/client/src/generated/api.ts is stale: run `npm run generate -w @payments-sandbox/client` and commit it",
  );
  process.exit(1);
}
console.warn("generated API types are up to date");
