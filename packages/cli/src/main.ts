import { run } from "./cli.js";

// The `payments-sandbox` command. Ctrl-C (or SIGTERM) asks a long-running
// command to finish cleanly (listen restores the webhook endpoint); a second
// one exits at once.
let stop: () => void = () => undefined;
const stopped = new Promise<void>((resolve) => (stop = resolve));
let signals = 0;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    signals += 1;
    if (signals > 1) process.exit(130);
    stop();
  });
}

const code = await run(
  process.argv.slice(2),
  { stdout: process.stdout, stderr: process.stderr, env: process.env },
  stopped,
);
// Exit once what was written has left (pipes are asynchronous on some
// systems), without waiting for fetch's idle keep-alive sockets.
process.stdout.write("", () => process.stderr.write("", () => process.exit(code)));
