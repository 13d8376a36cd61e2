import type { Handlers } from "../../http/operations.js";
import type { VerificationService } from "./service.js";

export function verificationRoutes(
  verifications: VerificationService,
): Handlers<"createVerification" | "listVerifications" | "getVerification"> {
  return {
    createVerification: async ({ body }, ctx) => ({
      status: 200,
      body: await verifications.create(ctx, body),
    }),
    listVerifications: async ({ query }, ctx) => ({
      status: 200,
      body: await verifications.list(ctx, query),
    }),
    getVerification: async ({ params }, ctx) => ({
      status: 200,
      body: await verifications.get(ctx, params.verificationId),
    }),
  };
}
