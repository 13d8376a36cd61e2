import { randomBytes } from "node:crypto";
import { sha256Hex } from "../crypto/sha256.js";

// The single-use links the sandbox hosts (card details, KYC): a random token
// in the URL is the only authorisation, so only its digest is stored.

const LINK_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** A new link token (32 random bytes, base64url) and the digest to store for it. */
export function newLinkToken(): { token: string; digest: string } {
  const token = randomBytes(32).toString("base64url");
  return { token, digest: linkDigest(token)! };
}

/** The stored digest of a token from a URL; undefined when it is not one the sandbox makes. */
export function linkDigest(token: string): string | undefined {
  return LINK_TOKEN.test(token) ? sha256Hex(token) : undefined;
}
