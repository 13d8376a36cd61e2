import type { Handlers } from "../../http/operations.js";
import { walletHeaders } from "../../signing/headers.js";
import type { WalletService } from "./wallet-service.js";

/** PATCH /internal-accounts/{id} and its export: embedded-wallet signed flows. */
export function walletRoutes(
  wallets: WalletService,
): Handlers<"updateInternalAccount" | "exportInternalAccount"> {
  return {
    updateInternalAccount: ({ params, headers, body }, ctx) =>
      wallets.setPrivacy(ctx, params.id, walletHeaders(headers), body.privateEnabled),
    exportInternalAccount: ({ params, headers, body }, ctx) =>
      wallets.export(ctx, params.id, walletHeaders(headers), body.clientPublicKey),
  };
}
