import type { Handlers } from "../../http/operations.js";
import type { CardTransactionService } from "./service.js";

export function cardTransactionRoutes(
  transactions: CardTransactionService,
): Handlers<"listCardTransactions" | "getCardTransaction"> {
  return {
    listCardTransactions: async ({ query }, ctx) => ({
      status: 200,
      body: await transactions.list(ctx, query),
    }),
    getCardTransaction: async ({ params }, ctx) => ({
      status: 200,
      body: await transactions.get(ctx, params.id),
    }),
  };
}

/** Sandbox only: card network events (x-sandbox-only in openapi.yaml). */
export function cardSimulationRoutes(
  transactions: CardTransactionService,
): Handlers<
  | "simulateCardAuthorization"
  | "simulateCardClearing"
  | "simulateCardReturn"
  | "simulateCardIncrement"
  | "simulateCardReversal"
> {
  return {
    simulateCardAuthorization: async ({ params, body }, ctx) => ({
      status: 201,
      body: await transactions.authorize(ctx, params.cardId, body),
    }),
    simulateCardClearing: async ({ params, body }, ctx) => ({
      status: 200,
      body: await transactions.clear(ctx, params.cardId, body),
    }),
    simulateCardReturn: async ({ params, body }, ctx) => ({
      status: 200,
      body: await transactions.refund(ctx, params.cardId, body),
    }),
    simulateCardIncrement: async ({ params, body }, ctx) => ({
      status: 200,
      body: await transactions.increment(ctx, params.cardId, body),
    }),
    simulateCardReversal: async ({ params, body }, ctx) => ({
      status: 200,
      body: await transactions.reverse(ctx, params.cardId, body),
    }),
  };
}
