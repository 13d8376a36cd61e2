import type { Handlers } from "../../http/operations.js";
import type { VerificationService } from "./service.js";

export function verificationRoutes(
  verifications: VerificationService,
): Handlers<"createVerification"> {
  return {
    createVerification: async ({ body }, ctx) => ({
      status: 201,
      body: await verifications.create(ctx, body),
    }),
  };
}
