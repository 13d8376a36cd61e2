import type { Handlers } from "../../http/operations.js";
import type { InternalAccountService } from "../internal-accounts/service.js";
import type { QuoteService } from "../quotes/service.js";
import type { UmaReceiveService } from "./uma-receive.js";

/** Sandbox-only helpers (x-sandbox-only in openapi.yaml). */
export function sandboxRoutes(
  accounts: InternalAccountService,
  quotes: QuoteService,
  umaReceive: UmaReceiveService,
): Handlers<"sandboxFundInternalAccount" | "sandboxSend" | "sandboxReceive"> {
  return {
    sandboxFundInternalAccount: async ({ params, body }, ctx) => ({
      status: 200,
      body: await accounts.fund(ctx, params.accountId, body.amount),
    }),
    sandboxSend: async ({ body }, ctx) => ({
      status: 200,
      body: await quotes.fundRealtime(ctx, body),
    }),
    sandboxReceive: async ({ body }, ctx) => ({
      status: 200,
      body: await umaReceive.receive(ctx, body),
    }),
  };
}
