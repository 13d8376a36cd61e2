import { OperationRoutes } from "../../http/operations.js";
import { bodyOf, callerOf, contextOf } from "../../http/context.js";
import { param, query } from "../../http/route-helpers.js";
import type {
  CardTransactionFilter,
  CardTransactionService,
  SimulateAuthorization,
  SimulateClearing,
  SimulateIncrement,
  SimulateReturn,
  SimulateReversal,
} from "./service.js";

export function cardTransactionRoutes(transactions: CardTransactionService): OperationRoutes {
  const router = new OperationRoutes();
  router.get("/card-transactions", async (req, res) => {
    res.json(await transactions.list(contextOf(res), query<CardTransactionFilter>(req)));
  });
  router.get("/card-transactions/:id", async (req, res) => {
    res.json(await transactions.get(contextOf(res), param(req, "id")));
  });
  return router;
}

/** Sandbox only: card network events (x-sandbox-only in openapi.yaml). */
export function cardSimulationRoutes(transactions: CardTransactionService): OperationRoutes {
  const router = new OperationRoutes();
  const base = "/sandbox/cards/:cardId/simulate";
  router.post(
    `${base}/authorization`,
    async (req, res) => {
      const body = bodyOf<SimulateAuthorization>(req);
      res.status(201).json(await transactions.authorize(callerOf(res), param(req, "cardId"), body));
    },
    // The hot path: the clock offset comes with the card, in one read.
    { readsClockItself: true },
  );
  router.post(`${base}/clearing`, async (req, res) => {
    const ctx = contextOf(res);
    res.json(await transactions.clear(ctx, param(req, "cardId"), bodyOf<SimulateClearing>(req)));
  });
  router.post(`${base}/return`, async (req, res) => {
    const ctx = contextOf(res);
    res.json(await transactions.refund(ctx, param(req, "cardId"), bodyOf<SimulateReturn>(req)));
  });
  router.post(`${base}/increment`, async (req, res) => {
    const ctx = contextOf(res);
    const body = bodyOf<SimulateIncrement>(req);
    res.json(await transactions.increment(ctx, param(req, "cardId"), body));
  });
  router.post(`${base}/reversal`, async (req, res) => {
    const ctx = contextOf(res);
    const body = bodyOf<SimulateReversal>(req);
    res.json(await transactions.reverse(ctx, param(req, "cardId"), body));
  });
  return router;
}
