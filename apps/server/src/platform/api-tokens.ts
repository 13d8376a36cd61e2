import { randomBytes, randomUUID, scrypt as scryptCb, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";
import type { Schemas } from "@payments-sandbox/client";
import type { Clock } from "../clock.js";
import { sha256Hex } from "../crypto/sha256.js";
import type { Database } from "../db/database.js";
import { batchedRead, insert, q } from "../db/query.js";
import type { SqlProgram } from "../db/sql.js";

const scrypt = promisify(scryptCb) as (
  password: string,
  salt: Buffer,
  keylen: number,
) => Promise<Buffer>;

// An API token's id is the user name of HTTP Basic authentication (the
// contract's `clientId` is the same value) and its secret the password.
// Secrets are stored as scrypt hashes. scrypt is slow on purpose, so a
// successful check is remembered in memory by a fast digest of the presented
// secret, together with the stored hash it matched. The row is still read on
// every request: a changed or deleted token stops working at once, in every
// process, because the stored hash no longer matches the one remembered. A
// wrong secret never matches the memo and pays the full cost.
const MEMO_LIMIT = 10_000;

/** What a token may do (the contract's Permission); see http/permissions.ts for where each is checked. */
export type Permission = Schemas["Permission"];

/** Every permission, in the contract's order. */
export const ALL_PERMISSIONS = ["VIEW", "TRANSACT", "MANAGE"] as const satisfies Permission[];
// A permission added to openapi.yaml but missing above does not compile.
type Unlisted = Exclude<Permission, (typeof ALL_PERMISSIONS)[number]>;
const everyPermissionListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyPermissionListed;

/**
 * The token the sandbox makes for itself (on first start, or from
 * SANDBOX_TOKEN_ID): the platform's own credentials, allowed everything.
 * Migration 0013 gave the tokens made before names and permissions existed
 * the same name and permissions.
 */
export const SANDBOX_TOKEN = {
  name: "Sandbox token",
  permissions: ALL_PERMISSIONS,
} as const;

export interface TokenIdentity {
  tokenId: string;
  platformId: string;
  permissions: readonly Permission[];
  /** The platform's sandbox clock offset, read with the token. */
  clockOffsetSeconds: number;
}

/** The stored form of a token's permissions: a JSON array, each permission once. */
export function storedPermissions(permissions: readonly Permission[]): string {
  return JSON.stringify([...new Set(permissions)]);
}

export function parsePermissions(stored: string): Permission[] {
  return JSON.parse(stored) as Permission[];
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

export interface TokenGrant {
  name: string;
  permissions: readonly Permission[];
}

/** Stores a token whose secret is already hashed. */
export function* storeApiToken(
  clock: Clock,
  platformId: string,
  tokenId: string,
  hashed: HashedSecret,
  grant: TokenGrant = SANDBOX_TOKEN,
): SqlProgram<void> {
  const now = clock.now();
  yield* insert("ApiToken", {
    id: tokenId,
    platformId,
    name: grant.name,
    permissions: storedPermissions(grant.permissions),
    secretSalt: hashed.salt,
    secretHash: hashed.hash,
    createdAt: now,
    updatedAt: now,
  });
}

export async function createApiToken(
  db: Database,
  clock: Clock,
  platformId: string,
  tokenId: string,
  secret: string,
  grant: TokenGrant = SANDBOX_TOKEN,
): Promise<void> {
  const hashed = await hashSecret(secret);
  await db.transaction(() => storeApiToken(clock, platformId, tokenId, hashed, grant));
}

/** Read on every request: the token, and its platform's clock with it. */
const tokenRows = batchedRead({ id: "t.id" }, (where) =>
  q
    .selectFrom("ApiToken as t")
    .innerJoin("Platform as p", "p.id", "t.platformId")
    .select([
      "t.id",
      "t.platformId",
      "t.permissions",
      "t.secretSalt",
      "t.secretHash",
      "p.clockOffsetSeconds",
    ])
    .where(where),
);

export class ApiTokenVerifier {
  /** Digest of (token id, presented secret) → the stored hash it was checked against. */
  private readonly memo = new Map<string, string>();

  constructor(private readonly db: Database) {}

  async verify(tokenId: string, secret: string): Promise<TokenIdentity | undefined> {
    const row = await this.db.batched(tokenRows, { id: tokenId });
    const digest = sha256Hex(`${tokenId}\0${secret}`);
    if (row && this.memo.get(digest) === row.secretHash) return identityOf(tokenId, row);

    // Hash even for an unknown token so timing does not reveal which ids exist.
    const salt = row ? Buffer.from(row.secretSalt, "hex") : randomBytes(16);
    const expected = row ? Buffer.from(row.secretHash, "hex") : randomBytes(32);
    const actual = await scrypt(secret, salt, 32);
    if (!row || !timingSafeEqual(actual, expected)) return undefined;

    if (this.memo.size >= MEMO_LIMIT) this.memo.clear();
    this.memo.set(digest, row.secretHash);
    return identityOf(tokenId, row);
  }
}

/** Permissions are read with the row on every request, so they too apply at once. */
function identityOf(
  tokenId: string,
  row: { platformId: string; permissions: string; clockOffsetSeconds: number },
): TokenIdentity {
  return {
    tokenId,
    platformId: row.platformId,
    permissions: parsePermissions(row.permissions),
    clockOffsetSeconds: row.clockOffsetSeconds,
  };
}
