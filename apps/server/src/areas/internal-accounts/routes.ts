import { OperationRoutes } from "../../http/operations.js";
import { bodyOf, contextOf } from "../../http/context.js";
import { param, query } from "../../http/route-helpers.js";
import type {
  InternalAccountCreate,
  InternalAccountFilter,
  InternalAccountService,
} from "./service.js";

export function internalAccountRoutes(accounts: InternalAccountService): OperationRoutes {
  const router = new OperationRoutes();
  router.post("/internal-accounts", async (req, res) => {
    res.status(201).json(await accounts.create(contextOf(res), bodyOf<InternalAccountCreate>(req)));
  });
  router.get("/internal-accounts", async (req, res) => {
    res.json(await accounts.list(contextOf(res), query<InternalAccountFilter>(req)));
  });
  router.get("/internal-accounts/:id", async (req, res) => {
    res.json(await accounts.get(contextOf(res), param(req, "id")));
  });
  return router;
}
