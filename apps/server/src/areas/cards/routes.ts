import type { Handlers } from "../../http/operations.js";
import type { CardService } from "./service.js";

export function cardRoutes(
  cards: CardService,
): Handlers<"createCard" | "listCards" | "getCardById" | "updateCardById" | "revealCard"> {
  return {
    createCard: async ({ body }, ctx) => ({ status: 201, body: await cards.create(ctx, body) }),
    listCards: async ({ query }, ctx) => ({ status: 200, body: await cards.list(ctx, query) }),
    getCardById: async ({ params }, ctx) => ({
      status: 200,
      body: await cards.get(ctx, params.id),
    }),
    updateCardById: async ({ params, body }, ctx) => ({
      status: 200,
      body: await cards.update(ctx, params.id, body),
    }),
    revealCard: async ({ params }, ctx) => ({
      status: 200,
      body: await cards.reveal(ctx, params.id),
    }),
  };
}
