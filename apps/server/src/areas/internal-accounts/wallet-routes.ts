import { OperationRoutes } from "../../http/operations.js";
import { bodyOf, contextOf } from "../../http/context.js";
import { param, send } from "../../http/route-helpers.js";
import { walletHeaders } from "../../signing/headers.js";
import type { WalletService } from "./wallet-service.js";

/** PATCH /internal-accounts/{id} and its export: embedded-wallet signed flows. */
export function walletRoutes(wallets: WalletService): OperationRoutes {
  const router = new OperationRoutes();
  router.patch("/internal-accounts/:id", async (req, res) => {
    const { privacyEnabled } = bodyOf<{ privacyEnabled: boolean }>(req);
    send(
      res,
      await wallets.setPrivacy(
        contextOf(res),
        param(req, "id"),
        walletHeaders(req),
        privacyEnabled,
      ),
    );
  });
  router.post("/internal-accounts/:id/export", async (req, res) => {
    const { clientPublicKey } = bodyOf<{ clientPublicKey: string }>(req);
    send(
      res,
      await wallets.export(contextOf(res), param(req, "id"), walletHeaders(req), clientPublicKey),
    );
  });
  return router;
}
