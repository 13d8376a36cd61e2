import { pino, type Logger } from "pino";

export type { Logger };

// Secrets must never reach the logs: request serialisers below log only the
// method, path and ids, never headers or bodies; redact covers anything a
// caller logs by mistake.
export function createLogger(level: string): Logger {
  return pino({
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
  });
}
