import { verifyWebhookSignature } from "@payments-sandbox/crypto";
import type { components } from "./generated/api.js";

/** Name of the header that carries the signature of a webhook delivery (production's name). */
export const WEBHOOK_SIGNATURE_HEADER = "X-Grid-Signature";

/**
 * The name earlier versions of the sandbox used. Deliveries still carry it,
 * with the same value, so that old receivers keep working; it will be
 * dropped. Read WEBHOOK_SIGNATURE_HEADER.
 * @deprecated
 */
export const LEGACY_WEBHOOK_SIGNATURE_HEADER = "X-Service-Signature";

export type WebhookEnvelope = components["schemas"]["WebhookEnvelope"];

/**
 * A delivery's request headers as servers hand them over: fetch's `Headers`,
 * or a plain object such as Node's `req.headers` (names in any case).
 */
export type WebhookHeaders =
  | { get(name: string): string | null }
  | Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * The signature of a delivery: `X-Grid-Signature`, or, when a delivery (or a
 * proxy in front of you) has only the old name, `X-Service-Signature`.
 */
export function webhookSignatureOf(headers: WebhookHeaders): string | undefined {
  for (const name of [WEBHOOK_SIGNATURE_HEADER, LEGACY_WEBHOOK_SIGNATURE_HEADER]) {
    const value = headerOf(headers, name);
    if (value !== undefined && value !== "") return value;
  }
  return undefined;
}

function headerOf(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof headers.get === "function") {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const lower = name.toLowerCase();
  const record = headers as Readonly<Record<string, string | readonly string[] | undefined>>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === lower);
  const value = key === undefined ? undefined : record[key];
  return typeof value === "string" ? value : value?.[0];
}

/**
 * Checks a webhook delivery before you trust it.
 *
 * - `rawBody`: the request body exactly as received (string or bytes), read
 *   before any JSON parsing: re-serialised JSON does not verify.
 * - `signature`: the delivery's headers (the signature is read from
 *   `X-Grid-Signature`, else from the deprecated `X-Service-Signature`), or
 *   the `X-Grid-Signature` header's value itself.
 * - `publicKeyPem`: `webhookPublicKey` from `GET /sandbox/keys`.
 *
 * Returns false for a bad signature and for any malformed input.
 */
export function verifyWebhook(
  rawBody: string | Uint8Array,
  signature: string | null | undefined | WebhookHeaders,
  publicKeyPem: string,
): boolean {
  const headerValue =
    typeof signature === "object" && signature !== null ? webhookSignatureOf(signature) : signature;
  if (typeof headerValue !== "string" || headerValue === "") return false;
  return verifyWebhookSignature(rawBody, headerValue, publicKeyPem);
}
