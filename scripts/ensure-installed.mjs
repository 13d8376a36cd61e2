// Installs the workspace's dependencies with `npm ci` only when they are
// missing or the lock file (or a package.json) changed since the last
// install, so a second `npm run sandbox` or `npm run check` never needs the
// registry, and what is installed is always exactly the lock file.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const stampPath = join(root, "node_modules", ".sandbox-install-stamp");

function fingerprint() {
  const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const files = [
    "package.json",
    "package-lock.json",
    ...rootManifest.workspaces.map((w) => join(w, "package.json")),
  ];
  const hash = createHash("sha256");
  for (const file of files)
    hash
      .update(file)
      .update("\0")
      .update(readFileSync(join(root, file)));
  return hash.digest("hex");
}

const wanted = fingerprint();
const current = existsSync(stampPath) ? readFileSync(stampPath, "utf8").trim() : undefined;
if (current === wanted) process.exit(0);
// --check: only say whether an install is due (exit 1), without installing.
if (process.argv.includes("--check")) {
  console.error("node_modules does not match package-lock.json: run `npm ci`");
  process.exit(1);
}

console.log(
  current === undefined
    ? "Installing dependencies from package-lock.json (npm ci)..."
    : "package-lock.json changed since the last install: reinstalling (npm ci)...",
);
const result = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], {
  cwd: root,
  stdio: "inherit",
});
if (result.status !== 0) process.exit(result.status ?? 1);
writeFileSync(stampPath, `${wanted}\n`);
