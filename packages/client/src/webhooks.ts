import { verifyWebhookSignature } from "@payments-sandbox/crypto";
import type { components } from "./generated/api.js";

/** Name of the header that carries the signature of a webhook delivery. */
export const WEBHOOK_SIGNATURE_HEADER = "X-Service-Signature";

export type WebhookEnvelope = components["schemas"]["WebhookEnvelope"];

/**
 * Checks a webhook delivery before you trust it.
 *
 * - `rawBody`: the request body exactly as received (string or bytes), read
 *   before any JSON parsing: re-serialised JSON does not verify.
 * - `headerValue`: the `X-Service-Signature` header.
 * - `publicKeyPem`: `webhookPublicKey` from `GET /sandbox/keys`.
 *
 * Returns false for a bad signature and for any malformed input.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  headerValue: string | null | undefined,
  publicKeyPem: string,
): boolean {
  if (typeof headerValue !== "string" || headerValue === "") return false;
  return verifyWebhookSignature(rawBody, headerValue, publicKeyPem);
}
