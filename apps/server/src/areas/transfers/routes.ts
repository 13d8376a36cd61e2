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
      body: await transfers.create(ctx, "TRANSFER_IN", {
        internalAccountId: body.destination.accountId,
        externalAccountId: body.source.accountId,
        amount: body.amount,
      }),
    })),
    createTransferOut: idempotent(idempotency, async ({ body }, ctx) => ({
      status: 201,
      body: await transfers.create(ctx, "TRANSFER_OUT", {
        internalAccountId: body.source.accountId,
        externalAccountId: body.destination.accountId,
        amount: body.amount,
        remittanceInformation: body.remittanceInformation,
      }),
    })),
  };
}
