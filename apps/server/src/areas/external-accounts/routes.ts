import type { Handlers } from "../../http/operations.js";
import type { OwnershipVerification } from "./ownership.js";
import type { ExternalAccountService } from "./service.js";

type Operations =
  | "listCustomerExternalAccounts"
  | "createCustomerExternalAccount"
  | "getCustomerExternalAccountById"
  | "deleteCustomerExternalAccountById"
  | "createExternalAccountOwnershipChallenge"
  | "verifyExternalAccountOwnership"
  | "listPlatformExternalAccounts"
  | "createPlatformExternalAccount"
  | "getPlatformExternalAccountById"
  | "deletePlatformExternalAccountById"
  | "createPlatformExternalAccountOwnershipChallenge"
  | "verifyPlatformExternalAccountOwnership";

/** The same operations on a customer's accounts and on the platform's own. */
export function externalAccountRoutes(
  accounts: ExternalAccountService,
  ownership: OwnershipVerification,
): Handlers<Operations> {
  return {
    listCustomerExternalAccounts: async ({ query }, ctx) => ({
      status: 200,
      body: await accounts.list(ctx, "customers", query),
    }),
    createCustomerExternalAccount: async ({ body }, ctx) => ({
      status: 201,
      body: await accounts.create(ctx, "customers", body),
    }),
    getCustomerExternalAccountById: async ({ params }, ctx) => ({
      status: 200,
      body: await accounts.get(ctx, "customers", params.externalAccountId),
    }),
    deleteCustomerExternalAccountById: async ({ params }, ctx) => {
      await accounts.delete(ctx, "customers", params.externalAccountId);
      return { status: 204 };
    },
    createExternalAccountOwnershipChallenge: async ({ params, body }, ctx) => ({
      status: 201,
      body: await ownership.challenge(ctx, "customers", params.externalAccountId, body.method),
    }),
    verifyExternalAccountOwnership: async ({ params, body }, ctx) => ({
      status: 200,
      body: await ownership.verify(ctx, "customers", params.externalAccountId, body.signature),
    }),
    listPlatformExternalAccounts: async ({ query }, ctx) => ({
      status: 200,
      body: await accounts.list(ctx, "platform", query),
    }),
    createPlatformExternalAccount: async ({ body }, ctx) => ({
      status: 201,
      body: await accounts.create(ctx, "platform", body),
    }),
    getPlatformExternalAccountById: async ({ params }, ctx) => ({
      status: 200,
      body: await accounts.get(ctx, "platform", params.externalAccountId),
    }),
    deletePlatformExternalAccountById: async ({ params }, ctx) => {
      await accounts.delete(ctx, "platform", params.externalAccountId);
      return { status: 204 };
    },
    createPlatformExternalAccountOwnershipChallenge: async ({ params, body }, ctx) => ({
      status: 201,
      body: await ownership.challenge(ctx, "platform", params.externalAccountId, body.method),
    }),
    verifyPlatformExternalAccountOwnership: async ({ params, body }, ctx) => ({
      status: 200,
      body: await ownership.verify(ctx, "platform", params.externalAccountId, body.signature),
    }),
  };
}
