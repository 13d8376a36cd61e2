import type { Handlers } from "../../http/operations.js";
import type { InternalAccountService } from "../internal-accounts/service.js";
import { estimateWithdrawalFee } from "./withdrawal-fees.js";

export function cryptoRoutes(
  accounts: InternalAccountService,
): Handlers<"estimateCryptoWithdrawalFee"> {
  return {
    estimateCryptoWithdrawalFee: async ({ body }, ctx) => ({
      status: 200,
      body: await estimateWithdrawalFee(ctx, accounts, body),
    }),
  };
}
