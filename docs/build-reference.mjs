// Builds the API reference served at /docs into dist/: the page and its script
// from reference/, and Redoc's standalone bundle beside them. The page thus
// needs no other host when it runs, and the build needs no network.
//
// The bundle is the Redoc build that @redocly/cli ships for
// `build-docs --inlineBundle`. The `redoc` package itself cannot be installed:
// 3.0.x requires @redocly/redoc-opentelemetry ^0.5.1, which the registry lacks.
import { copyFileSync, cpSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "dist");
const bundleSpecifier = "@redocly/cli/lib/chunks/redoc.standalone.js";

let bundle;
try {
  bundle = createRequire(import.meta.url).resolve(bundleSpecifier);
} catch {
  console.error(
    `${bundleSpecifier} is missing: this @redocly/cli keeps Redoc's bundle elsewhere ` +
      "(look for the file `build-docs --inlineBundle` inlines) and docs/build-reference.mjs needs updating.",
  );
  process.exit(1);
}
const version = /Version: (\S+)/.exec(readFileSync(bundle, "utf8").slice(0, 500))?.[1];

rmSync(out, { recursive: true, force: true });
cpSync(join(here, "reference"), out, { recursive: true });
copyFileSync(bundle, join(out, "redoc.standalone.js"));
console.log(`API reference built in docs/dist with Redoc ${version ?? "(version unknown)"}`);
