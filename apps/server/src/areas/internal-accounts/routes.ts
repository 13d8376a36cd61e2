import type { Handlers } from "../../http/operations.js";
import type { InternalAccountService } from "./service.js";

export function internalAccountRoutes(
  accounts: InternalAccountService,
): Handlers<"createInternalAccount" | "listInternalAccounts" | "getInternalAccount"> {
  return {
    createInternalAccount: async ({ body }, ctx) => ({
      status: 201,
      body: await accounts.create(ctx, body),
    }),
    listInternalAccounts: async ({ query }, ctx) => ({
      status: 200,
      body: await accounts.list(ctx, query),
    }),
    getInternalAccount: async ({ params }, ctx) => ({
      status: 200,
      body: await accounts.get(ctx, params.id),
    }),
  };
}
