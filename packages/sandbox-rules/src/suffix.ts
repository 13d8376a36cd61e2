import type { SuffixMode } from "./types.js";

/** Length of every magic suffix. */
export const SUFFIX_LENGTH = 3;

// Formatting that people put inside account numbers ("DE89 3704 ... 02", "123-456-002"). Dropping
// it makes "the last 3 digits" of a formatted value the same as of the unformatted one.
const SEPARATORS = /[\s-]/gu;
const THREE_DIGITS = /^[0-9]{3}$/;

/** The last `count` characters (Unicode code points, not UTF-16 units) of `value`. */
export function lastCharacters(value: string, count: number): string {
  return Array.from(value).slice(-count).join("");
}

/**
 * Reads the magic suffix of `identifier`, or `null` when it has none (then the table's "other"
 * row applies). Leading and trailing whitespace is ignored in both modes.
 *
 * - `digits`: for a value with a domain part (`alice002@bank.example`, `$user002@host`), only the
 *   part before the last `@` is read, since the spec appends the digits to the username. Spaces
 *   and hyphens are dropped; the last 3 remaining characters must all be ASCII digits.
 * - `characters`: the last 3 characters, whatever they are.
 *
 * Fewer than 3 characters left to read gives `null`.
 */
export function suffixOf(identifier: string | null | undefined, mode: SuffixMode): string | null {
  if (identifier === null || identifier === undefined) return null;
  let value = identifier.trim();
  if (mode === "digits") {
    const at = value.lastIndexOf("@");
    if (at !== -1) value = value.slice(0, at);
    value = value.replace(SEPARATORS, "");
  }
  const suffix = lastCharacters(value, SUFFIX_LENGTH);
  if (Array.from(suffix).length < SUFFIX_LENGTH) return null;
  if (mode === "digits" && !THREE_DIGITS.test(suffix)) return null;
  return suffix;
}
