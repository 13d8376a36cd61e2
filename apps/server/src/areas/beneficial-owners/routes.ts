import type { Handlers } from "../../http/operations.js";
import type { BeneficialOwnerService } from "./service.js";

export function beneficialOwnerRoutes(
  owners: BeneficialOwnerService,
): Handlers<
  "createBeneficialOwner" | "listBeneficialOwners" | "getBeneficialOwner" | "updateBeneficialOwner"
> {
  return {
    createBeneficialOwner: async ({ body }, ctx) => ({
      status: 201,
      body: await owners.create(ctx, body),
    }),
    listBeneficialOwners: async ({ query }, ctx) => ({
      status: 200,
      body: await owners.list(ctx, query),
    }),
    getBeneficialOwner: async ({ params }, ctx) => ({
      status: 200,
      body: await owners.get(ctx, params.beneficialOwnerId),
    }),
    updateBeneficialOwner: async ({ params, body }, ctx) => ({
      status: 200,
      body: await owners.update(ctx, params.beneficialOwnerId, body),
    }),
  };
}
