import { pino, type Logger } from "pino";

export type { Logger };

// Secrets must never reach the logs: request serialisers below log only the
// method, path and ids, never headers or bodies; redact covers anything a
// caller logs by mistake.
export function createLogger(level: string): Logger {
  return pino(
    {
      level,
      redact: {
        paths: [
          "*.authorization",
          "*.secret",
          "*.privateKey",
          "*.headers.authorization",
          '*.headers["service-wallet-signature"]',
        ],
        censor: "[redacted]",
      },
    },
    stdoutLines(),
  );
}

/**
 * Log lines on stdout, written so that they can never hold the process up.
 * pino's default destination buffers lines behind an asynchronous write and
 * flushes them at exit with a synchronous write that, on any error but
 * EAGAIN, sleeps 100 ms and tries again, without end: when the reader of a
 * stdout pipe has gone away (EPIPE), `process.exit` never returns. Node's own
 * stdout stream does not hold exit for unwritten lines, and once it fails
 * (EPIPE, EIO) the lines are dropped: nobody is reading them.
 */
function stdoutLines(): { write(line: string): void } {
  watch(process.stdout);
  return { write: (line) => writeLine(process.stdout, line) };
}

const failedStreams = new WeakSet<NodeJS.WriteStream>();
const watchedStreams = new WeakSet<NodeJS.WriteStream>();

/**
 * Writes to stdout or stderr without ever throwing or waiting: a stream that
 * failed (its reader went away) is not written again, and its error is not
 * an uncaught exception.
 */
export function writeLine(stream: NodeJS.WriteStream, line: string): void {
  watch(stream);
  if (failedStreams.has(stream) || stream.destroyed) return;
  stream.write(line);
}

function watch(stream: NodeJS.WriteStream): void {
  if (watchedStreams.has(stream)) return;
  watchedStreams.add(stream);
  stream.on("error", () => failedStreams.add(stream));
}
