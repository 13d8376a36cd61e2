import { lastCharacters, SUFFIX_LENGTH } from "./suffix.js";

/** First digit of every sandbox card's `last4`; the other three come from the suffix. */
export const CARD_LAST4_PREFIX = "4";

/**
 * The `last4` of a sandbox card, deterministic from the issuance identifier (`platformCardId`, or
 * `cardholderId` when absent) so that tests can predict it: `CARD_LAST4_PREFIX` followed by one
 * digit per character of the identifier's last 3 characters. A digit stays itself; any other
 * character becomes its Unicode code point modulo 10 (`a` is 97, so 7). An identifier shorter than
 * 3 characters is padded on the left with `0`.
 */
export function cardLast4(identifier: string): string {
  const digits = Array.from(lastCharacters(identifier.trim(), SUFFIX_LENGTH), (ch) =>
    /[0-9]/.test(ch) ? ch : String((ch.codePointAt(0) ?? 0) % 10),
  ).join("");
  return CARD_LAST4_PREFIX + digits.padStart(SUFFIX_LENGTH, "0");
}

/** The identifier that decides issuance: `platformCardId`, or `cardholderId` when it is absent. */
export function cardIssuanceIdentifier(input: {
  readonly platformCardId?: string | null | undefined;
  readonly cardholderId: string;
}): string {
  const { platformCardId, cardholderId } = input;
  return platformCardId === undefined || platformCardId === null || platformCardId.trim() === ""
    ? cardholderId
    : platformCardId;
}
