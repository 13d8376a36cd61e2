import { sha256 } from "@noble/hashes/sha2.js";
import {
  bytesToHex as nobleBytesToHex,
  concatBytes as nobleConcatBytes,
  hexToBytes as nobleHexToBytes,
} from "@noble/hashes/utils.js";
import { CryptoError } from "./errors.js";

const encoder = new TextEncoder();
// `fatal` so that invalid UTF-8 is reported instead of silently replaced.
const strictDecoder = new TextDecoder("utf-8", { fatal: true });

/** UTF-8 bytes of a string. */
export function utf8(str: string): Uint8Array {
  return encoder.encode(str);
}

/** Decodes UTF-8, throwing CryptoError on invalid byte sequences. */
export function utf8Decode(bytes: Uint8Array): string {
  try {
    return strictDecoder.decode(bytes);
  } catch (cause) {
    throw new CryptoError("invalid UTF-8", { cause });
  }
}

/** Lowercase hex of the bytes. */
export function bytesToHex(bytes: Uint8Array): string {
  return nobleBytesToHex(bytes);
}

/**
 * Parses hex (either case, no `0x` prefix, even length). Throws CryptoError
 * on anything else rather than silently truncating.
 */
export function hexToBytes(hex: string): Uint8Array {
  if (typeof hex !== "string") throw new CryptoError("hex must be a string");
  try {
    return nobleHexToBytes(hex);
  } catch (cause) {
    throw new CryptoError("invalid hex", { cause });
  }
}

/** True when the string is non-empty, even-length hex. */
export function isHex(str: unknown): str is string {
  return typeof str === "string" && str.length > 0 && /^(?:[0-9a-fA-F]{2})+$/.test(str);
}

function toBytes(input: string | Uint8Array): Uint8Array {
  return typeof input === "string" ? utf8(input) : input;
}

// btoa/atob operate on "binary strings" (one char per byte). They exist in
// Node >= 16 and all browsers, so no Buffer is needed.
function bytesToBinary(bytes: Uint8Array): string {
  let out = "";
  // Chunked to stay clear of argument-count limits on large inputs.
  for (let i = 0; i < bytes.length; i += 0x8000) {
    out += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return out;
}

function binaryToBytes(binary: string): Uint8Array {
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** Standard base64 (RFC 4648 section 4) with padding. */
export function base64Encode(input: string | Uint8Array): string {
  return btoa(bytesToBinary(toBytes(input)));
}

/** Decodes standard base64; padding is optional, whitespace is not allowed. */
export function base64Decode(str: string): Uint8Array {
  if (typeof str !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(str)) {
    throw new CryptoError("invalid base64");
  }
  const body = str.replace(/=+$/, "");
  // A single leftover character can never encode a whole byte.
  if (body.length % 4 === 1) throw new CryptoError("invalid base64 length");
  if (str.length !== body.length && str.length % 4 !== 0) {
    throw new CryptoError("invalid base64 padding");
  }
  try {
    return binaryToBytes(atob(body.padEnd(body.length + ((4 - (body.length % 4)) % 4), "=")));
  } catch (cause) {
    throw new CryptoError("invalid base64", { cause });
  }
}

/** base64url (RFC 4648 section 5) without padding; strings are UTF-8 encoded first. */
export function base64urlEncode(input: string | Uint8Array): string {
  return base64Encode(input).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * Decodes base64url. The canonical form has no padding, but correct trailing
 * padding is tolerated; characters outside the url-safe alphabet are rejected
 * (so standard base64 with `+` or `/` does not slip through).
 */
export function base64urlDecode(str: string): Uint8Array {
  if (typeof str !== "string" || !/^[A-Za-z0-9_-]*={0,2}$/.test(str)) {
    throw new CryptoError("invalid base64url");
  }
  return base64Decode(str.replace(/-/g, "+").replace(/_/g, "/"));
}

/** Lowercase hex SHA-256 of a string (UTF-8) or bytes. */
export function sha256Hex(input: string | Uint8Array): string {
  return bytesToHex(sha256(toBytes(input)));
}

/** Concatenates byte arrays. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  return nobleConcatBytes(...parts);
}
