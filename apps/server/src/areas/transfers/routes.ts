import { idempotent, type Handlers } from "../../http/operations.js";
import type { IdempotencyStore } from "../../http/idempotency.js";
import type { TransferService } from "./service.js";

export function transferRoutes(
  transfers: TransferService,
  idempotency: IdempotencyStore,
): Handlers<"createTransferIn" | "createTransferOut"> {
  return {
    createTransferIn: idempotent(idempotency, async ({ body }, ctx) => ({
      status: 201,
      body: await transfers.create(ctx, "TRANSFER_IN", body),
    })),
    createTransferOut: idempotent(idempotency, async ({ body }, ctx) => ({
      status: 201,
      body: await transfers.create(ctx, "TRANSFER_OUT", body),
    })),
  };
}
