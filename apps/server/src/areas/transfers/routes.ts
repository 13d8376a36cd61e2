import { OperationRoutes } from "../../http/operations.js";
import { bodyOf, contextOf } from "../../http/context.js";
import { idempotentRoute, type IdempotencyStore } from "../../http/idempotency.js";
import type { TransferRequest, TransferService } from "./service.js";

export function transferRoutes(
  transfers: TransferService,
  idempotency: IdempotencyStore,
): OperationRoutes {
  const router = new OperationRoutes();
  router.post(
    "/transfer-in",
    idempotentRoute(idempotency, "createTransferIn", async (req, res) => ({
      status: 201,
      body: await transfers.create(contextOf(res), "TRANSFER_IN", bodyOf<TransferRequest>(req)),
    })),
  );
  router.post(
    "/transfer-out",
    idempotentRoute(idempotency, "createTransferOut", async (req, res) => ({
      status: 201,
      body: await transfers.create(contextOf(res), "TRANSFER_OUT", bodyOf<TransferRequest>(req)),
    })),
  );
  return router;
}
