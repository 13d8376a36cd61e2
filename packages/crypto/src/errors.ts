/**
 * Error thrown by every helper in this package when an input cannot be
 * decoded, a key is not on the curve, a signature fails, or decryption fails.
 * `reason` is a short human-readable explanation that is safe to log (it never
 * contains key material).
 */
export class CryptoError extends Error {
  readonly reason: string;

  constructor(reason: string, options?: { cause?: unknown }) {
    super(reason, options);
    this.name = "CryptoError";
    this.reason = reason;
  }
}

/**
 * Kinds of stamp failure. The server maps them to different error codes:
 * MALFORMED means the header could not be understood at all, INVALID means it
 * was well formed but the signature does not match the payload.
 */
export type StampErrorKind = "MALFORMED" | "INVALID";

export class StampError extends Error {
  readonly kind: StampErrorKind;

  constructor(kind: StampErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "StampError";
    this.kind = kind;
  }
}
