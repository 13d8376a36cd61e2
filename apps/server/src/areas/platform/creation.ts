import { generateKeyPairSync } from "node:crypto";
import type { Clock } from "../../clock.js";
import { insert } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { newId } from "../../ids.js";
import { openMissingAccounts } from "../internal-accounts/opening.js";
import { DEFAULT_CURRENCIES } from "./service.js";

/** A raw P-256 private key as 64 hex characters. */
export function newP256PrivateKeyHex(): string {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const d = privateKey.export({ format: "jwk" }).d;
  if (!d) throw new Error("P-256 key generation returned no private scalar");
  return Buffer.from(d, "base64url").toString("hex").padStart(64, "0");
}

/**
 * A new platform with its own webhook and OTP keys, clock (no offset) and
 * default accounts: the sandbox's own on first start, and every isolated
 * platform of POST /sandbox/platforms.
 */
export function* createPlatform(
  clock: Clock,
  name: string,
  options: { webhookUrl?: string } = {},
): SqlProgram<string> {
  const now = clock.now();
  const id = newId("Platform");
  yield* insert("Platform", {
    id,
    name,
    webhookUrl: options.webhookUrl ?? null,
    webhookPrivateKey: newP256PrivateKeyHex(),
    otpSigningPrivateKey: newP256PrivateKeyHex(),
    createdAt: now,
    updatedAt: now,
  });
  yield* openMissingAccounts(
    { platformId: id, customerId: null },
    DEFAULT_CURRENCIES.map((currency) => currency.currencyCode),
    now,
  );
  return id;
}
