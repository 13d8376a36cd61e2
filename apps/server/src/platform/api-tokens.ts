import {
  createHash,
  randomBytes,
  randomUUID,
  scrypt as scryptCb,
  timingSafeEqual,
} from "node:crypto";
import { promisify } from "node:util";
import type { Db } from "../db/client.js";
import type { Clock } from "../clock.js";

const scrypt = promisify(scryptCb) as (
  password: string,
  salt: Buffer,
  keylen: number,
) => Promise<Buffer>;

// Secrets are stored as scrypt hashes. scrypt is slow on purpose, so a
// successful check is remembered in memory by a fast digest of the presented
// secret; a wrong secret never matches the memo and pays the full cost.
const MEMO_TTL_MS = 5 * 60_000;

export interface TokenIdentity {
  tokenId: string;
  platformId: string;
}

export async function hashSecret(secret: string): Promise<{ salt: string; hash: string }> {
  const salt = randomBytes(16);
  const hash = await scrypt(secret, salt, 32);
  return { salt: salt.toString("hex"), hash: hash.toString("hex") };
}

export function generateCredentials(): { tokenId: string; secret: string } {
  return { tokenId: randomUUID(), secret: randomBytes(32).toString("base64url") };
}

export async function createApiToken(
  db: Db,
  clock: Clock,
  platformId: string,
  tokenId: string,
  secret: string,
): Promise<void> {
  const { salt, hash } = await hashSecret(secret);
  await db.apiToken.create({
    data: { id: tokenId, platformId, secretSalt: salt, secretHash: hash, createdAt: clock.now() },
  });
}

export class ApiTokenVerifier {
  private readonly memo = new Map<string, { identity: TokenIdentity; expiresAt: number }>();

  constructor(private readonly db: Db) {}

  async verify(tokenId: string, secret: string): Promise<TokenIdentity | undefined> {
    const digest = createHash("sha256").update(tokenId).update("\0").update(secret).digest("hex");
    const hit = this.memo.get(digest);
    const now = Date.now();
    if (hit && hit.expiresAt > now) return hit.identity;

    const row = await this.db.apiToken.findUnique({ where: { id: tokenId } });
    // Hash even for an unknown token so timing does not reveal which ids exist.
    const salt = row ? Buffer.from(row.secretSalt, "hex") : randomBytes(16);
    const expected = row ? Buffer.from(row.secretHash, "hex") : randomBytes(32);
    const actual = await scrypt(secret, salt, 32);
    if (!row || !timingSafeEqual(actual, expected)) return undefined;

    const identity = { tokenId: row.id, platformId: row.platformId };
    if (this.memo.size > 10_000) this.memo.clear();
    this.memo.set(digest, { identity, expiresAt: now + MEMO_TTL_MS });
    return identity;
  }
}
