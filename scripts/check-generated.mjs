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
// The client's own generator, writing to a scratch file instead.
execFileSync(process.execPath, [join(root, "packages/client/scripts/generate-types.mjs"), fresh], {
  stdio: ["ignore", "ignore", "inherit"],
});
if (readFileSync(fresh, "utf8") !== readFileSync(committed, "utf8")) {
  console.error(
    "packages/client/src/generated/api.ts is stale: run `npm run generate -w @payments-sandbox/client` and commit it",
  );
  process.exit(1);
}
console.warn("generated API types are up to date");
