import type { Handlers } from "../../http/operations.js";
import type { InternalAccountService } from "./service.js";

export function internalAccountRoutes(
  accounts: InternalAccountService,
): Handlers<"listCustomerInternalAccounts" | "listPlatformInternalAccounts"> {
  return {
    listCustomerInternalAccounts: async ({ query }, ctx) => ({
      status: 200,
      body: await accounts.listCustomerAccounts(ctx, query),
    }),
    listPlatformInternalAccounts: async ({ query }, ctx) => ({
      status: 200,
      body: await accounts.listPlatformAccounts(ctx, query),
    }),
  };
}
