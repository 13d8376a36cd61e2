import type { Schemas } from "@payments-sandbox/client";
import { prepared, q, run, type Row } from "../../db/query.js";
import { fieldError, invalidInput, notFound } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import { missingPermission } from "../../http/permissions.js";
import type { Query } from "../../http/operation-types.js";
import {
  countedPage,
  decodeCursor,
  newestPage,
  type Page,
  withinTimes,
} from "../../http/pagination.js";
import {
  generateCredentials,
  hashSecret,
  parsePermissions,
  storeApiToken,
  storedPermissions,
} from "../../platform/api-tokens.js";

// A platform's API tokens (POST/GET /tokens, GET/DELETE /tokens/{tokenId}).
// A token is the credentials of HTTP Basic: its id is the user name (and the
// contract's `clientId`), its secret the password. The secret exists in
// clear only while the create request runs: it is hashed before it is
// stored, answered once, and never logged (the access log has no bodies, and
// POST /tokens takes no Idempotency-Key, so no answer is kept). Every
// statement is guarded by the caller's platform: another platform's token is
// a 404 like a token that does not exist. Deleting a token revokes it at once
// in every process, since the authenticator reads the token's row on every
// request (platform/api-tokens.ts).

export type ApiToken = Schemas["ApiToken"];
export type ApiTokenCreate = Schemas["ApiTokenCreateRequest"];
export type TokenFilter = Query<"listTokens">;
type TokenRow = Pick<Row<"ApiToken">, "id" | "name" | "permissions" | "createdAt" | "updatedAt">;

/** The columns a token is shown from: never its secret's hash or salt. */
const SHOWN = ["id", "name", "permissions", "createdAt", "updatedAt"] as const;

const tokenRow = prepared((args: { id: string; platformId: string }) =>
  q
    .selectFrom("ApiToken")
    .select(SHOWN)
    .where("id", "=", args.id)
    .where("platformId", "=", args.platformId),
);

export function toApiToken(row: TokenRow): ApiToken {
  return {
    id: row.id,
    name: row.name,
    permissions: parsePermissions(row.permissions),
    clientId: row.id,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

const tokenNotFound = (id: string) => notFound("TOKEN_NOT_FOUND", `No API token ${id}`);

export class ApiTokenService {
  constructor(private readonly services: Services) {}

  /**
   * A new token, with its secret: the only answer that carries it. A token
   * grants only permissions it has itself, or a MANAGE token could make
   * itself a TRANSACT one: refused with 401, as POST /tokens declares no 403.
   */
  async create(ctx: RequestContext, input: ApiTokenCreate): Promise<ApiToken> {
    const lacking = input.permissions.find((p) => !ctx.permissions?.includes(p));
    if (lacking !== undefined) {
      throw missingPermission(
        lacking,
        401,
        `This API token cannot grant the ${lacking} permission: it does not have it.`,
      );
    }
    const { tokenId, secret } = generateCredentials();
    // scrypt is slow on purpose: the secret is hashed before the transaction.
    const hashed = await hashSecret(secret);
    const now = ctx.clock.now();
    const row: TokenRow = {
      id: tokenId,
      name: input.name,
      permissions: storedPermissions(input.permissions),
      createdAt: now,
      updatedAt: now,
    };
    await this.services.data.transaction(() =>
      storeApiToken({ now: () => now }, ctx.platformId, tokenId, hashed, input),
    );
    return { ...toApiToken(row), clientSecret: secret };
  }

  async get(ctx: RequestContext, id: string): Promise<ApiToken> {
    const row = await this.services.data.one(tokenRow({ id, platformId: ctx.platformId }));
    if (!row) throw tokenNotFound(id);
    return toApiToken(row);
  }

  async list(
    ctx: RequestContext,
    filter: TokenFilter,
  ): Promise<Page<ApiToken> & { totalCount: number }> {
    let query = q.selectFrom("ApiToken").where("platformId", "=", ctx.platformId);
    if (filter.name !== undefined) query = query.where("name", "=", filter.name);
    query = query.$call(withinTimes(filter));
    return countedPage(
      this.services.data,
      {
        rows: query.select(SHOWN).$call(newestPage(decodeCursor(filter.cursor), filter.limit)),
        count: query.select((eb) => eb.fn.countAll().as("count")),
      },
      filter.limit,
      toApiToken,
    );
  }

  /**
   * Revokes a token. The token making the request cannot delete itself: it
   * is deleted with another one, so a platform always keeps a token to call
   * the API with (a platform without one could not make another).
   */
  async delete(ctx: RequestContext, id: string): Promise<void> {
    if (id === ctx.tokenId) {
      throw invalidInput("An API token cannot delete itself: delete it with another token", {
        errors: [fieldError("path.tokenId", "is the token making this request")],
      });
    }
    const deleted = await this.services.data.transaction(() =>
      run(q.deleteFrom("ApiToken").where("id", "=", id).where("platformId", "=", ctx.platformId)),
    );
    if (deleted === 0) throw tokenNotFound(id);
  }
}
