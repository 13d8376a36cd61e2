import { BlockList, isIP } from "node:net";
import { fieldError, invalidInput } from "../../errors.js";

// Where webhooks may be sent. Only an absolute http(s) URL written exactly as
// it is meant: the URL parser quietly drops tabs and line breaks, and trims
// spaces and control characters at either end, so such a URL would be kept as
// written but sent somewhere else. Link-local addresses, where cloud metadata
// services answer, are never a receiver. Loopback and private addresses are:
// partners run their receivers locally.

const FORBIDDEN = new BlockList();
FORBIDDEN.addSubnet("169.254.0.0", 16, "ipv4");
FORBIDDEN.addSubnet("fe80::", 10, "ipv6");
// AWS's metadata service on IPv6 (its IPv4 address is link-local).
FORBIDDEN.addAddress("fd00:ec2::254", "ipv6");

/** Whitespace (any Unicode space) or a control character, anywhere. */
const NOT_IN_URL = /[\s\p{Cc}]/u;

/** Whether an IP address is one webhooks are never sent to (IPv4-mapped IPv6 included). */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return FORBIDDEN.check(address, family === 4 ? "ipv4" : "ipv6");
}

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
