import { createHash } from "node:crypto";

/** Lowercase hex SHA-256 of a string (UTF-8) or bytes; the same as @payments-sandbox/crypto's sha256Hex. */
export function sha256Hex(input: string | Uint8Array): string {
  return createHash("sha256").update(input).digest("hex");
}
