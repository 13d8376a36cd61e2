#!/usr/bin/env node
import { constants } from "node:os";
import { dirname, isAbsolute, relative } from "node:path";
import { ConfigError, loadConfig, type Config } from "./config.js";
import { parseDatabaseUrl } from "./db/client.js";
import { writeLine } from "./logger.js";
import { startServer, type RunningServer } from "./server.js";

// A setting the sandbox cannot run with is one line naming it, and exit code
// 1: not a stack trace. Anything else is a bug, reported with its stack.
async function start(): Promise<{ config: Config; running: RunningServer }> {
  try {
    const config = loadConfig();
    return { config, running: await startServer(config) };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    writeLine(process.stderr, `Configuration error: ${err.message}\n`);
    // Exits even with database connections or threads already open.
    process.exit(1);
  }
}

const { config, running } = await start();
const { bootstrap } = running;

// The banner goes to stdout, not the log stream: it is for the person who
// just started the sandbox. A secret appears here only the one time it is
// created, and never when it came from the environment.
const lines = [
  "",
  "Payments platform sandbox is running",
  `  Base URL:      ${running.baseUrl}`,
  `  API reference: ${running.origin}/docs`,
  `  OpenAPI spec:  ${running.origin}/openapi.yaml`,
  `  Passkey demo:  ${running.passkeyDemoUrl}`,
];
if (bootstrap.newCredentials) {
  lines.push(
    `  Token id:      ${bootstrap.newCredentials.tokenId}`,
    `  Secret:        ${bootstrap.newCredentials.secret}`,
    "  (shown once: the database keeps only a hash of the secret)",
    "",
    "  Put them in your shell (every guide, snippet and the CLI read these):",
    `  export SANDBOX_BASE_URL=${running.baseUrl}`,
    `  export SANDBOX_TOKEN_ID=${bootstrap.newCredentials.tokenId} SANDBOX_TOKEN_SECRET=${bootstrap.newCredentials.secret}`,
    "",
    "  Try it:",
    `  curl -u "$SANDBOX_TOKEN_ID:$SANDBOX_TOKEN_SECRET" ${running.baseUrl}/customers`,
  );
} else if (bootstrap.credentialsFromEnvironment) {
  lines.push("  Credentials:   SANDBOX_TOKEN_ID / SANDBOX_TOKEN_SECRET from the environment");
} else {
  lines.push(
    "  Credentials:   printed when this database was created; to get new ones, set",
    `                 SANDBOX_TOKEN_ID and SANDBOX_TOKEN_SECRET${dataHint(config.databaseUrl)}`,
  );
}
writeLine(process.stdout, `${lines.join("\n")}\n\n`);

/**
 * ", or delete <folder>" for a SQLite database: its folder as seen from where
 * the person typed the command (npm's INIT_CWD: the repository root for
 * `npm run sandbox`), not from the server package npm runs it in.
 */
function dataHint(databaseUrl: string): string {
  const target = parseDatabaseUrl(databaseUrl);
  if (target.provider !== "sqlite") return "";
  const folder = dirname(target.location);
  const from = process.env.INIT_CWD ?? process.cwd();
  const shown = relative(from, folder);
  return `, or delete ${shown === "" || isAbsolute(shown) ? folder : shown}`;
}

// A stop is bounded: CI jobs and process supervisors wait for this exit.
// Past the deadline the process says what the stop was still waiting for
// (on stderr too, in case nobody reads stdout any more) and exits non-zero;
// a second signal exits at once.
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (stopping) {
      writeLine(process.stderr, `${signal} again while shutting down: exiting now\n`);
      process.exit(128 + constants.signals[signal]);
    }
    stopping = true;
    running.log.info({ signal }, "shutting down");
    setTimeout(() => {
      const waitingFor = running.waitingFor() ?? "nothing (it was about to exit)";
      const timeoutMs = config.shutdownTimeoutMs;
      running.log.error({ waitingFor, timeoutMs }, "shutdown timed out");
      writeLine(
        process.stderr,
        `shutdown timed out after ${timeoutMs} ms, still waiting for ${waitingFor}\n`,
      );
      process.exit(1);
    }, config.shutdownTimeoutMs);
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        running.log.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  });
}
