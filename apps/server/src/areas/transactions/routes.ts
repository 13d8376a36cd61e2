import { OperationRoutes } from "../../http/operations.js";
import { contextOf } from "../../http/context.js";
import { param, query } from "../../http/route-helpers.js";
import type { TransactionFilter, TransactionService } from "./service.js";

export function transactionRoutes(transactions: TransactionService): OperationRoutes {
  const router = new OperationRoutes();
  router.get("/transactions", async (req, res) => {
    res.json(await transactions.list(contextOf(res), query<TransactionFilter>(req)));
  });
  router.get("/transactions/:transactionId", async (req, res) => {
    res.json(await transactions.get(contextOf(res), param(req, "transactionId")));
  });
  router.post("/transactions/:transactionId/approve", async (req, res) => {
    res.json(await transactions.approve(contextOf(res), param(req, "transactionId")));
  });
  return router;
}
