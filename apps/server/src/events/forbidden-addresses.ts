import { BlockList, isIP } from "node:net";

// Link-local addresses, where cloud metadata services answer, are never a
// webhook receiver: checked when an endpoint is set (areas/webhooks) and
// again when its host name is resolved for a delivery (webhook-post.ts).
// Loopback and private addresses are: partners run their receivers locally.

const FORBIDDEN = new BlockList();
FORBIDDEN.addSubnet("169.254.0.0", 16, "ipv4");
FORBIDDEN.addSubnet("fe80::", 10, "ipv6");
// AWS's metadata service on IPv6 (its IPv4 address is link-local).
FORBIDDEN.addAddress("fd00:ec2::254", "ipv6");

/** Whether an IP address is one webhooks are never sent to (IPv4-mapped IPv6 included). */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return FORBIDDEN.check(address, family === 4 ? "ipv4" : "ipv6");
}
