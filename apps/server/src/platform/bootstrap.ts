import type { Provider } from "../db/client.js";
import type { Database } from "../db/database.js";
import { takeStartupLock } from "../db/migrate.js";
import { one, q, run } from "../db/query.js";
import type { SqlProgram } from "../db/sql.js";
import type { Clock } from "../clock.js";
import type { Config } from "../config.js";
import { generateCredentials, hashSecret, storeApiToken } from "./api-tokens.js";

/**
 * Makes a new platform inside the caller's transaction and answers its id.
 * What a platform starts with (keys, accounts) is the platform area's rule
 * (areas/platform/creation.ts), handed in by the server.
 */
export type CreatePlatform = (clock: Clock, name: string) => SqlProgram<string>;

export interface BootstrapResult {
  platformId: string;
  /** Set only when this start created credentials nobody has seen yet. */
  newCredentials?: { tokenId: string; secret: string };
  /** Whether the credentials came from SANDBOX_TOKEN_ID / SANDBOX_TOKEN_SECRET. */
  credentialsFromEnvironment: boolean;
}

/** The sandbox's own platform: the first one made. */
export const firstPlatform = q
  .selectFrom("Platform")
  .select("id")
  .orderBy("createdAt")
  .orderBy("id")
  .limit(1);
/** A token of the first platform, if it has any. */
const firstPlatformToken = q
  .selectFrom("ApiToken")
  .select("id")
  .where("platformId", "=", (eb) => eb.selectFrom(firstPlatform.as("p")).select("p.id"))
  .limit(1);

/**
 * Makes sure a sandbox platform and an API token exist: the platform's own
 * token, with every permission (SANDBOX_TOKEN), from which the platform makes
 * any narrower ones with POST /tokens. Credentials given by environment are
 * used as they are (created, or re-hashed if the secret changed); otherwise
 * the first start creates a token and returns it once. A start also creates
 * one when the first platform has none left.
 *
 * Several processes may start at once on a fresh database: the whole
 * find-or-create runs in one transaction under the migrations' lock, so the
 * first one creates and the others find what it created.
 */
export async function bootstrapPlatform(
  db: Database,
  provider: Provider,
  clock: Clock,
  config: Config,
  createPlatform: CreatePlatform,
): Promise<BootstrapResult> {
  const fromEnvironment =
    config.sandboxTokenId && config.sandboxTokenSecret
      ? { tokenId: config.sandboxTokenId, secret: config.sandboxTokenSecret }
      : undefined;
  // scrypt is slow on purpose, and a transaction does not wait for anything
  // but the database: secrets are hashed before it. A secret from the
  // environment is stored on every start (created, or re-hashed); a
  // generated one only when no token existed when this start looked, which
  // is the first start (another process may still win the race under the lock).
  const hashed = fromEnvironment ? await hashSecret(fromEnvironment.secret) : undefined;
  const generated =
    fromEnvironment || (await db.one(firstPlatformToken)) ? undefined : generateCredentials();
  const generatedHash = generated && (await hashSecret(generated.secret));

  return db.transaction(function* (): SqlProgram<BootstrapResult> {
    yield* takeStartupLock(provider);
    const existing = yield* one(firstPlatform);
    const platformId = existing?.id ?? (yield* createPlatform(clock, "Sandbox platform"));

    if (fromEnvironment && hashed) {
      const token = yield* one(
        q.selectFrom("ApiToken").select("platformId").where("id", "=", fromEnvironment.tokenId),
      );
      if (!token) {
        yield* storeApiToken(clock, platformId, fromEnvironment.tokenId, hashed);
      } else {
        yield* run(
          q
            .updateTable("ApiToken")
            .set({ secretSalt: hashed.salt, secretHash: hashed.hash })
            .where("id", "=", fromEnvironment.tokenId),
        );
      }
      return { platformId: token?.platformId ?? platformId, credentialsFromEnvironment: true };
    }

    const anyToken = yield* one(firstPlatformToken);
    if (anyToken || !generated || !generatedHash) {
      return { platformId, credentialsFromEnvironment: false };
    }
    yield* storeApiToken(clock, platformId, generated.tokenId, generatedHash);
    return { platformId, newCredentials: generated, credentialsFromEnvironment: false };
  });
}
