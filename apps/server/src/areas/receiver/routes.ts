import type { Handlers } from "../../http/operations.js";
import type { ReceiverService } from "./service.js";

export function receiverRoutes(
  receivers: ReceiverService,
): Handlers<"lookupUma" | "lookupExternalAccount"> {
  return {
    lookupUma: async ({ params, query }, ctx) => ({
      status: 200,
      body: await receivers.lookupUma(ctx, params.receiverUmaAddress, query),
    }),
    lookupExternalAccount: async ({ params, query }, ctx) => ({
      status: 200,
      body: await receivers.lookupExternalAccount(ctx, params.accountId, query),
    }),
  };
}
