// `npm run client:pack -- <folder>`: builds the typed client and its crypto
// package and packs both as tarballs into <folder> (made when missing), for
// `npm install <folder>/*.tgz` in a partner's own project. It installs
// nothing beyond what `npm run sandbox` would (ensure-installed.mjs keeps
// the lock file's install and its stamp), so the sandbox's own install stays
// as it was.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const folderArg = process.argv[2];
if (!folderArg) {
  console.error("usage: npm run client:pack -- <folder>   (the tarballs are written there)");
  process.exit(2);
}
// npm runs scripts in the repository root; a relative folder means the one
// the command was typed in.
const folder = resolve(process.env.INIT_CWD ?? process.cwd(), folderArg);
mkdirSync(folder, { recursive: true });

function step(what, command, args) {
  console.log(what);
  const result = spawnSync(command, args, {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit"],
    shell: process.platform === "win32",
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

step("Checking the install...", process.execPath, [join(root, "scripts/ensure-installed.mjs")]);
step("Building the client...", "npx", [
  "turbo",
  "run",
  "build",
  "--filter=@payments-sandbox/client...",
  "--output-logs=errors-only",
]);
const packages = ["crypto", "client"];
const tarballs = packages.map((name) => {
  const { version } = JSON.parse(
    readFileSync(join(root, "packages", name, "package.json"), "utf8"),
  );
  return join(folder, `payments-sandbox-${name}-${version}.tgz`);
});
step(`Packing into ${folder}...`, "npm", [
  "pack",
  "--silent",
  ...packages.flatMap((name) => ["-w", `@payments-sandbox/${name}`]),
  "--pack-destination",
  folder,
]);
console.log(
  `\nIn your project (their other dependencies come from the npm registry):\n  npm install ${tarballs.join(" ")}`,
);
