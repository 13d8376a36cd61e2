import { Router } from "express";
import { bodyOf, contextOf } from "../../http/context.js";
import type { VerificationCreate, VerificationService } from "./service.js";

export function verificationRoutes(verifications: VerificationService): Router {
  const router = Router();
  router.post("/verifications", async (req, res) => {
    res
      .status(201)
      .json(await verifications.create(contextOf(res), bodyOf<VerificationCreate>(req)));
  });
  return router;
}
