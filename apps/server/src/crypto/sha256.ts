import { hash } from "node:crypto";

/**
 * Lowercase hex SHA-256 of a string (UTF-8) or bytes; the same as
 * @payments-sandbox/crypto's sha256Hex. The one-shot `hash` makes no Hash
 * object: about 0.9 µs against 2–3 µs for createHash().update().digest()
 * on a short input, and every API request hashes its credentials once.
 */
export function sha256Hex(input: string | Uint8Array): string {
  return hash("sha256", input, "hex");
}

/**
 * `count` decimal digits derived from `input`, the same for the same input:
 * the SHA-256 read as a number, modulo 10^count, with leading zeros kept.
 * Fictitious but stable account numbers and references are made this way.
 */
export function sha256Digits(input: string, count: number): string {
  const hash = BigInt(`0x${sha256Hex(input)}`);
  return (hash % 10n ** BigInt(count)).toString().padStart(count, "0");
}
