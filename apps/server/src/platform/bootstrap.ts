import { generateKeyPairSync } from "node:crypto";
import type { Db, Provider, Tx } from "../db/client.js";
import { takeStartupLock } from "../db/migrate.js";
import type { Clock } from "../clock.js";
import type { Config } from "../config.js";
import { newId } from "../ids.js";
import { generateCredentials, hashSecret, storeApiToken } from "./api-tokens.js";

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

export async function createPlatform(db: Db | Tx, clock: Clock, name: string): Promise<string> {
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
 *
 * Several processes may start at once on a fresh database: the whole
 * find-or-create runs in one transaction under the migrations' lock, so the
 * first one creates and the others find what it created.
 */
export async function bootstrapPlatform(
  db: Db,
  provider: Provider,
  clock: Clock,
  config: Config,
): Promise<BootstrapResult> {
  const fromEnvironment =
    config.sandboxTokenId && config.sandboxTokenSecret
      ? { tokenId: config.sandboxTokenId, secret: config.sandboxTokenSecret }
      : undefined;
  // A secret from the environment is stored on every start (created, or
  // re-hashed): hash it before the lock is taken, as scrypt is slow on purpose.
  const hashed = fromEnvironment ? await hashSecret(fromEnvironment.secret) : undefined;

  return db.$transaction(
    async (tx) => {
      await takeStartupLock(tx, provider);
      const existing = await tx.platform.findFirst({ orderBy: { createdAt: "asc" } });
      const platformId = existing?.id ?? (await createPlatform(tx, clock, "Sandbox platform"));

      if (fromEnvironment && hashed) {
        const token = await tx.apiToken.findUnique({ where: { id: fromEnvironment.tokenId } });
        if (!token) {
          await storeApiToken(tx, clock, platformId, fromEnvironment.tokenId, hashed);
        } else {
          await tx.apiToken.update({
            where: { id: token.id },
            data: { secretSalt: hashed.salt, secretHash: hashed.hash },
          });
        }
        return { platformId: token?.platformId ?? platformId, credentialsFromEnvironment: true };
      }

      const anyToken = await tx.apiToken.findFirst({ where: { platformId } });
      if (anyToken) return { platformId, credentialsFromEnvironment: false };
      // Only a first start gets here: a new token, hashed under the lock.
      const generated = generateCredentials();
      const secret = await hashSecret(generated.secret);
      await storeApiToken(tx, clock, platformId, generated.tokenId, secret);
      return { platformId, newCredentials: generated, credentialsFromEnvironment: false };
    },
    // Other processes may hold the lock while they migrate.
    { maxWait: 30_000, timeout: 60_000 },
  );
}
