import { OperationRoutes } from "../../http/operations.js";
import { bodyOf, contextOf } from "../../http/context.js";
import { param, query } from "../../http/route-helpers.js";
import type { CardCreate, CardFilter, CardService, CardUpdate } from "./service.js";

export function cardRoutes(cards: CardService): OperationRoutes {
  const router = new OperationRoutes();
  router.post("/cards", async (req, res) => {
    res.status(201).json(await cards.create(contextOf(res), bodyOf<CardCreate>(req)));
  });
  router.get("/cards", async (req, res) => {
    res.json(await cards.list(contextOf(res), query<CardFilter>(req)));
  });
  router.get("/cards/:id", async (req, res) => {
    res.json(await cards.get(contextOf(res), param(req, "id")));
  });
  router.patch("/cards/:id", async (req, res) => {
    res.json(await cards.update(contextOf(res), param(req, "id"), bodyOf<CardUpdate>(req)));
  });
  router.post("/cards/:id/reveal", async (req, res) => {
    res.json(await cards.reveal(contextOf(res), param(req, "id")));
  });
  return router;
}
