// The browser bundle: the client and everything it imports (the crypto
// package, openapi-fetch, the curve and HPKE libraries) in one ES module, for
// a page to load with <script type="module"> and no build step of its own.
// Bundlers (esbuild, Vite, webpack) use the package's main entry instead.
import { build } from "esbuild";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
await build({
  absWorkingDir: root,
  entryPoints: ["dist/index.js"],
  outfile: "dist/browser/client.js",
  bundle: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  sourcemap: true,
  legalComments: "inline",
  logLevel: "warning",
});
