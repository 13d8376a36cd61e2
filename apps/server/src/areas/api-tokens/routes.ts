import type { Handlers } from "../../http/operations.js";
import type { ApiTokenService } from "./service.js";

export function apiTokenRoutes(
  tokens: ApiTokenService,
): Handlers<"createToken" | "listTokens" | "getTokenById" | "deleteTokenById"> {
  return {
    createToken: async ({ body }, ctx) => ({
      status: 201,
      body: await tokens.create(ctx, body),
    }),
    listTokens: async ({ query }, ctx) => ({
      status: 200,
      body: await tokens.list(ctx, query),
    }),
    getTokenById: async ({ params }, ctx) => ({
      status: 200,
      body: await tokens.get(ctx, params.tokenId),
    }),
    deleteTokenById: async ({ params }, ctx) => {
      await tokens.delete(ctx, params.tokenId);
      return { status: 204 };
    },
  };
}
