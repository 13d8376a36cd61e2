import type { IdempotencyStore } from "../../http/idempotency.js";
import { idempotent, type Handlers } from "../../http/operations.js";
import type { StablecoinOperationService } from "./operations.js";
import type { StablecoinProviderAccountService } from "./provider-accounts.js";
import type { StablecoinService } from "./service.js";

export function stablecoinRoutes(
  providerAccounts: StablecoinProviderAccountService,
  stablecoins: StablecoinService,
  operations: StablecoinOperationService,
  idempotency: IdempotencyStore,
): Handlers<
  | "linkStablecoinProviderAccount"
  | "listStablecoinProviderAccounts"
  | "getStablecoinProviderAccount"
  | "registerStablecoin"
  | "listStablecoins"
  | "getStablecoin"
  | "createStablecoinMint"
  | "createStablecoinBurn"
  | "listStablecoinOperations"
  | "getStablecoinOperation"
> {
  return {
    linkStablecoinProviderAccount: idempotent(idempotency, async ({ body }, ctx) => ({
      status: 201,
      body: await providerAccounts.link(ctx, body),
    })),
    listStablecoinProviderAccounts: async ({ query }, ctx) => ({
      status: 200,
      body: await providerAccounts.list(ctx, query),
    }),
    getStablecoinProviderAccount: async ({ params }, ctx) => ({
      status: 200,
      body: await providerAccounts.get(ctx, params.stablecoinProviderAccountId),
    }),
    registerStablecoin: idempotent(idempotency, async ({ body }, ctx) => ({
      status: 201,
      body: await stablecoins.register(ctx, body),
    })),
    listStablecoins: async ({ query }, ctx) => ({
      status: 200,
      body: await stablecoins.list(ctx, query),
    }),
    getStablecoin: async ({ params }, ctx) => ({
      status: 200,
      body: await stablecoins.get(ctx, params.stablecoinId),
    }),
    createStablecoinMint: idempotent(idempotency, async ({ params, body }, ctx) => ({
      status: 201,
      body: await operations.mint(ctx, params.stablecoinId, body),
    })),
    createStablecoinBurn: idempotent(idempotency, async ({ params, body }, ctx) => ({
      status: 201,
      body: await operations.burn(ctx, params.stablecoinId, body),
    })),
    listStablecoinOperations: async ({ params, query }, ctx) => ({
      status: 200,
      body: await operations.list(ctx, params.stablecoinId, query),
    }),
    getStablecoinOperation: async ({ params }, ctx) => ({
      status: 200,
      body: await operations.get(ctx, params.stablecoinOperationId),
    }),
  };
}
