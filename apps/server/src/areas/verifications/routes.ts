import { OperationRoutes } from "../../http/operations.js";
import { bodyOf, contextOf } from "../../http/context.js";
import type { VerificationCreate, VerificationService } from "./service.js";

export function verificationRoutes(verifications: VerificationService): OperationRoutes {
  const router = new OperationRoutes();
  router.post("/verifications", async (req, res) => {
    res
      .status(201)
      .json(await verifications.create(contextOf(res), bodyOf<VerificationCreate>(req)));
  });
  return router;
}
