#!/usr/bin/env node
// The file npm links as the `payments-sandbox` command. It exists before the
// TypeScript is built (npm links bins at install time), and runs the build.
await import("../dist/main.js");
