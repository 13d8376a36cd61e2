import type { Handlers } from "../../http/operations.js";
import type { CardTransactionService } from "./service.js";

/** Sandbox only: card network events (x-sandbox-only in openapi.yaml). */
export function cardSimulationRoutes(
  transactions: CardTransactionService,
): Handlers<
  | "sandboxSimulateCardAuthorization"
  | "sandboxSimulateCardClearing"
  | "sandboxSimulateCardReturn"
  | "sandboxSimulateCardIncrement"
  | "sandboxSimulateCardReversal"
> {
  return {
    sandboxSimulateCardAuthorization: async ({ params, body }, ctx) => ({
      status: 202,
      body: await transactions.authorize(ctx, params.id, body),
    }),
    sandboxSimulateCardClearing: async ({ params, body }, ctx) => ({
      status: 202,
      body: await transactions.clear(ctx, params.id, body),
    }),
    sandboxSimulateCardReturn: async ({ params, body }, ctx) => ({
      status: 202,
      body: await transactions.refund(ctx, params.id, body),
    }),
    sandboxSimulateCardIncrement: async ({ params, body }, ctx) => ({
      status: 200,
      body: await transactions.increment(ctx, params.id, body),
    }),
    sandboxSimulateCardReversal: async ({ params, body }, ctx) => ({
      status: 200,
      body: await transactions.reverse(ctx, params.id, body),
    }),
  };
}
