#!/usr/bin/env node
// The file npm links as the `payments-sandbox` command. It exists before the
// TypeScript is built (npm links bins at install time), so it says how to
// build instead of failing with a stack trace when the build is missing.
import { existsSync } from "node:fs";

const main = new URL("../dist/main.js", import.meta.url);
if (!existsSync(main)) {
  process.stderr.write(
    "payments-sandbox is not built yet. From the repository root run\n" +
      "  npm run sandbox        (builds it with the sandbox), or\n" +
      "  npx turbo run build --filter=@payments-sandbox/cli...\n",
  );
  process.exit(1);
}
await import(main.href);
