/** The host whose UMA receivers the sandbox simulates. */
export const SANDBOX_UMA_HOST = "sandbox.uma.money";

/** Longest local part, `$` included (UMAD-01, like the local part of an e-mail address). */
export const UMA_LOCAL_PART_MAX_LENGTH = 64;

/** Longest host name (RFC 1035). */
const DOMAIN_MAX_LENGTH = 253;

// UMAD-01 limits the username to a-z 0-9 - _ . + ; addresses are case-insensitive, so upper-case
// input is accepted here and lower-cased below.
const USERNAME = /^[a-z0-9._+-]+$/i;
// One DNS label: letters, digits and inner hyphens, 1 to 63 characters.
const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

/** A well-formed UMA address, lower-cased. */
export interface UmaAddress {
  /** `$username@domain`. */
  readonly address: string;
  /** `$username`: what the sandbox receiver table matches. */
  readonly localPart: string;
  /** The local part without `$`. */
  readonly username: string;
  readonly domain: string;
}

export type UmaParseResult =
  | { readonly ok: true; readonly address: UmaAddress }
  | { readonly ok: false; readonly problem: string };

/**
 * Parses a UMA address, `$username@domain`. Well-formed means:
 * - exactly one `@`, and no surrounding whitespace;
 * - the local part is `$` followed by at least one of `a-z 0-9 - _ . +` (any case), 64
 *   characters at most including the `$`;
 * - the domain is a host name: dot-separated labels of letters, digits and inner hyphens, each
 *   1 to 63 characters, 253 characters in all; no port, no trailing dot.
 * The result is lower-cased, since UMA addresses are case-insensitive.
 */
export function parseUmaAddress(input: string): UmaParseResult {
  const parts = input.split("@");
  if (parts.length !== 2) return fail("a UMA address has exactly one '@'");
  const [localPart = "", domain = ""] = parts;
  if (!localPart.startsWith("$")) return fail("a UMA address starts with '$'");
  const username = localPart.slice(1);
  if (!USERNAME.test(username)) {
    return fail("the username after '$' is one or more of a-z, 0-9, '-', '_', '.', '+'");
  }
  if (localPart.length > UMA_LOCAL_PART_MAX_LENGTH) {
    return fail(`the part before '@' is at most ${UMA_LOCAL_PART_MAX_LENGTH} characters`);
  }
  if (!isHostName(domain)) {
    return fail("the part after '@' is a host name such as sandbox.uma.money");
  }
  const lower = { localPart: localPart.toLowerCase(), domain: domain.toLowerCase() };
  return {
    ok: true,
    address: {
      address: `${lower.localPart}@${lower.domain}`,
      localPart: lower.localPart,
      username: lower.localPart.slice(1),
      domain: lower.domain,
    },
  };
}

/**
 * A host name: dot-separated labels of letters, digits and inner hyphens,
 * each 1 to 63 characters, 253 characters in all; no port, no trailing dot.
 * UMA addresses and a platform's UMA domain are both checked by it.
 */
export function isHostName(domain: string): boolean {
  return domain.length <= DOMAIN_MAX_LENGTH && domain.split(".").every((l) => LABEL.test(l));
}

function fail(problem: string): UmaParseResult {
  return { ok: false, problem };
}
