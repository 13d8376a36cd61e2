import { fieldError, invalidInput } from "../../errors.js";
import { isForbiddenAddress } from "../../events/forbidden-addresses.js";

// Where webhooks may be sent. Only an absolute http(s) URL written exactly as
// it is meant: the URL parser quietly drops tabs and line breaks, and trims
// spaces and control characters at either end, so such a URL would be kept as
// written but sent somewhere else. Nor a link-local address, where cloud
// metadata services answer (events/forbidden-addresses.ts).

/** Whitespace (any Unicode space) or a control character, anywhere. */
const NOT_IN_URL = /[\s\p{Cc}]/u;

/** Why `url` cannot be a webhook endpoint, or undefined when it can. */
export function webhookEndpointProblem(url: string): string | undefined {
  if (NOT_IN_URL.test(url)) return "must not contain whitespace or control characters";
  if (!URL.canParse(url)) return "not an absolute URL";
  const parsed = new URL(url);
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    return "scheme must be http or https";
  }
  // An IPv6 host is written in brackets.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
  if (isForbiddenAddress(host)) {
    return "must not be a link-local or cloud metadata address (169.254.0.0/16, fe80::/10)";
  }
  return undefined;
}

/** 400 INVALID_INPUT naming `webhookEndpoint` when `url` cannot receive webhooks. */
export function checkWebhookEndpoint(url: string): void {
  const problem = webhookEndpointProblem(url);
  if (problem === undefined) return;
  throw invalidInput(`webhookEndpoint ${problem}`, {
    errors: [fieldError("body.webhookEndpoint", problem)],
  });
}
