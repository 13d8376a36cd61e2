import type { Handlers } from "../../http/operations.js";
import type { ExternalAccountService } from "./service.js";

export function externalAccountRoutes(
  accounts: ExternalAccountService,
): Handlers<"createExternalAccount" | "listExternalAccounts" | "getExternalAccount"> {
  return {
    createExternalAccount: async ({ body }, ctx) => ({
      status: 201,
      body: await accounts.create(ctx, body),
    }),
    listExternalAccounts: async ({ query }, ctx) => ({
      status: 200,
      body: await accounts.list(ctx, query),
    }),
    getExternalAccount: async ({ params }, ctx) => ({
      status: 200,
      body: await accounts.get(ctx, params.id),
    }),
  };
}
