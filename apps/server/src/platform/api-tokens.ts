import {
  createHash,
  randomBytes,
  randomUUID,
  scrypt as scryptCb,
  timingSafeEqual,
} from "node:crypto";
import { promisify } from "node:util";
import type { Clock } from "../clock.js";
import type { Database } from "../db/database.js";
import { insert, prepared, q } from "../db/query.js";
import type { SqlProgram } from "../db/sql.js";

const scrypt = promisify(scryptCb) as (
  password: string,
  salt: Buffer,
  keylen: number,
) => Promise<Buffer>;

// Secrets are stored as scrypt hashes. scrypt is slow on purpose, so a
// successful check is remembered in memory by a fast digest of the presented
// secret, together with the stored hash it matched. The row is still read on
// every request: a changed or deleted token stops working at once, in every
// process, because the stored hash no longer matches the one remembered. A
// wrong secret never matches the memo and pays the full cost.
const MEMO_LIMIT = 10_000;

export interface TokenIdentity {
  tokenId: string;
  platformId: string;
  /** The platform's sandbox clock offset, read with the token. */
  clockOffsetSeconds: number;
}

export interface HashedSecret {
  salt: string;
  hash: string;
}

export async function hashSecret(secret: string): Promise<HashedSecret> {
  const salt = randomBytes(16);
  const hash = await scrypt(secret, salt, 32);
  return { salt: salt.toString("hex"), hash: hash.toString("hex") };
}

export function generateCredentials(): { tokenId: string; secret: string } {
  return { tokenId: randomUUID(), secret: randomBytes(32).toString("base64url") };
}

/** Stores a token whose secret is already hashed. */
export function* storeApiToken(
  clock: Clock,
  platformId: string,
  tokenId: string,
  hashed: HashedSecret,
): SqlProgram<void> {
  yield* insert("ApiToken", {
    id: tokenId,
    platformId,
    secretSalt: hashed.salt,
    secretHash: hashed.hash,
    createdAt: clock.now(),
  });
}

export async function createApiToken(
  db: Database,
  clock: Clock,
  platformId: string,
  tokenId: string,
  secret: string,
): Promise<void> {
  const hashed = await hashSecret(secret);
  await db.transaction(() => storeApiToken(clock, platformId, tokenId, hashed));
}

/** Read on every request: the token, and its platform's clock with it. */
const tokenRow = prepared((args: { id: string }) =>
  q
    .selectFrom("ApiToken as t")
    .innerJoin("Platform as p", "p.id", "t.platformId")
    .select(["t.platformId", "t.secretSalt", "t.secretHash", "p.clockOffsetSeconds"])
    .where("t.id", "=", args.id),
);

export class ApiTokenVerifier {
  /** Digest of (token id, presented secret) → the stored hash it was checked against. */
  private readonly memo = new Map<string, string>();

  constructor(private readonly db: Database) {}

  async verify(tokenId: string, secret: string): Promise<TokenIdentity | undefined> {
    const row = await this.db.one(tokenRow({ id: tokenId }));
    const digest = createHash("sha256").update(tokenId).update("\0").update(secret).digest("hex");
    if (row && this.memo.get(digest) === row.secretHash) {
      return { tokenId, platformId: row.platformId, clockOffsetSeconds: row.clockOffsetSeconds };
    }

    // Hash even for an unknown token so timing does not reveal which ids exist.
    const salt = row ? Buffer.from(row.secretSalt, "hex") : randomBytes(16);
    const expected = row ? Buffer.from(row.secretHash, "hex") : randomBytes(32);
    const actual = await scrypt(secret, salt, 32);
    if (!row || !timingSafeEqual(actual, expected)) return undefined;

    if (this.memo.size >= MEMO_LIMIT) this.memo.clear();
    this.memo.set(digest, row.secretHash);
    return { tokenId, platformId: row.platformId, clockOffsetSeconds: row.clockOffsetSeconds };
  }
}
