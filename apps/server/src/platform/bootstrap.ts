import { generateKeyPairSync } from "node:crypto";
import type { Db } from "../db/client.js";
import type { Clock } from "../clock.js";
import type { Config } from "../config.js";
import { newId } from "../ids.js";
import { createApiToken, generateCredentials, hashSecret } from "./api-tokens.js";

export interface BootstrapResult {
  platformId: string;
  /** Set only when this start created credentials nobody has seen yet. */
  newCredentials?: { tokenId: string; secret: string };
  /** Whether the credentials came from SANDBOX_TOKEN_ID / SANDBOX_TOKEN_SECRET. */
  credentialsFromEnvironment: boolean;
}

/** A raw P-256 private key as 64 hex characters. */
export function newP256PrivateKeyHex(): string {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const d = privateKey.export({ format: "jwk" }).d;
  if (!d) throw new Error("P-256 key generation returned no private scalar");
  return Buffer.from(d, "base64url").toString("hex").padStart(64, "0");
}

export async function createPlatform(db: Db, clock: Clock, name: string): Promise<string> {
  const now = clock.now();
  const id = newId("Platform");
  await db.platform.create({
    data: {
      id,
      name,
      webhookPrivateKey: newP256PrivateKeyHex(),
      otpSigningPrivateKey: newP256PrivateKeyHex(),
      createdAt: now,
      updatedAt: now,
    },
  });
  return id;
}

/**
 * Makes sure a sandbox platform and an API token exist. Credentials given by
 * environment are used as they are (created, or re-hashed if the secret
 * changed); otherwise the first start creates a token and returns it once.
 */
export async function bootstrapPlatform(
  db: Db,
  clock: Clock,
  config: Config,
): Promise<BootstrapResult> {
  const existing = await db.platform.findFirst({ orderBy: { createdAt: "asc" } });
  const platformId = existing?.id ?? (await createPlatform(db, clock, "Sandbox platform"));

  if (config.sandboxTokenId && config.sandboxTokenSecret) {
    const token = await db.apiToken.findUnique({ where: { id: config.sandboxTokenId } });
    if (!token) {
      await createApiToken(db, clock, platformId, config.sandboxTokenId, config.sandboxTokenSecret);
    } else {
      const { salt, hash } = await hashSecret(config.sandboxTokenSecret);
      await db.apiToken.update({
        where: { id: token.id },
        data: { secretSalt: salt, secretHash: hash },
      });
    }
    return { platformId: token?.platformId ?? platformId, credentialsFromEnvironment: true };
  }

  const anyToken = await db.apiToken.findFirst({ where: { platformId } });
  if (anyToken) return { platformId, credentialsFromEnvironment: false };
  const credentials = generateCredentials();
  await createApiToken(db, clock, platformId, credentials.tokenId, credentials.secret);
  return { platformId, newCredentials: credentials, credentialsFromEnvironment: false };
}
