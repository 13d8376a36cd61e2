// Installs the workspace's dependencies with `npm ci` only when they are
// missing or the lock file (or what a package.json says to install) changed
// since the last install, so a second `npm run sandbox` or `npm run check`
// never needs the registry, and what is installed is always exactly the
// lock file.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// Install scripts that compile C/C++ and take most of the install's time.
const NATIVE_MODULES = new Map([["better-sqlite3", "SQLite, written in C: the longest step"]]);

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const stampPath = join(root, "node_modules", ".sandbox-install-stamp");

// What of a package.json decides what `npm ci` installs: editing a script
// or a description must not cost a reinstall.
const INSTALL_FIELDS = [
  "name",
  "version",
  "workspaces",
  "dependencies",
  "devDependencies",
  "optionalDependencies",
  "peerDependencies",
  "overrides",
  "allowScripts",
  "bin",
];

function fingerprint() {
  const rootManifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const manifests = [
    "package.json",
    ...rootManifest.workspaces.map((w) => join(w, "package.json")),
  ];
  const hash = createHash("sha256");
  hash.update(readFileSync(join(root, "package-lock.json")));
  for (const file of manifests) {
    const manifest = JSON.parse(readFileSync(join(root, file), "utf8"));
    const relevant = INSTALL_FIELDS.map((field) => [field, manifest[field] ?? null]);
    hash.update(file).update("\0").update(JSON.stringify(relevant));
  }
  return hash.digest("hex");
}

const wanted = fingerprint();
// --stamp: record that node_modules matches (npm runs it after its own
// install, as the root package's postinstall), so a plain `npm ci` or
// `npm install` by hand counts as an install too.
if (process.argv.includes("--stamp")) {
  writeFileSync(stampPath, `${wanted}\n`);
  process.exit(0);
}
const current = existsSync(stampPath) ? readFileSync(stampPath, "utf8").trim() : undefined;
if (current === wanted) process.exit(0);
// --check: only say whether an install is due (exit 1), without installing.
if (process.argv.includes("--check")) {
  console.error("node_modules does not match package-lock.json: run `npm ci`");
  process.exit(1);
}

console.log(
  current === undefined
    ? "Installing dependencies from package-lock.json (npm ci): about 1 to 5 minutes the first time..."
    : "package-lock.json changed since the last install: reinstalling (npm ci)...",
);
const exitCode = await install();
if (exitCode !== 0) process.exit(exitCode);
writeFileSync(stampPath, `${wanted}\n`);

/**
 * Runs `npm ci`, telling what it is doing instead of staying silent: npm
 * itself prints nothing until the end, and the longest step, compiling
 * better-sqlite3's native module, gives no sign of life. With
 * --foreground-scripts npm announces each install script as "> name@version
 * install"; those lines are shown, with a note every 15 seconds while one
 * runs. npm's full output is kept and shown only when it fails.
 */
function install() {
  const started = Date.now();
  const seconds = () => Math.round((Date.now() - started) / 1000);
  let phase = "npm: resolving and unpacking packages";
  console.log(`  ${phase}...`);
  const ticker = setInterval(() => console.log(`  ...${phase} (${seconds()} s)`), 15_000);
  const child = spawn("npm", ["ci", "--no-audit", "--no-fund", "--foreground-scripts"], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    shell: process.platform === "win32",
  });
  let output = "";
  let pending = "";
  const onData = (chunk) => {
    output += chunk;
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      const script = /^> (\S+)@\S+ (preinstall|install|postinstall)$/.exec(line.trim());
      if (!script) continue;
      const [, name, stage] = script;
      phase = NATIVE_MODULES.has(name)
        ? `compiling the native module ${name} (${NATIVE_MODULES.get(name)})`
        : `running ${name}'s ${stage} script`;
      console.log(`  ${phase}...`);
    }
  };
  child.stdout.setEncoding("utf8").on("data", onData);
  child.stderr.setEncoding("utf8").on("data", onData);
  return new Promise((resolve) => {
    child.on("close", (code) => {
      clearInterval(ticker);
      if (code === 0) {
        console.log(`  npm ci done in ${seconds()} s`);
      } else {
        process.stderr.write(output);
        console.error(`npm ci failed (exit ${code}) after ${seconds()} s`);
      }
      resolve(code ?? 1);
    });
  });
}
