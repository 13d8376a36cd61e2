import { OperationRoutes } from "../../http/operations.js";
import { bodyOf, contextOf } from "../../http/context.js";
import { param, query } from "../../http/route-helpers.js";
import type {
  ExternalAccountCreate,
  ExternalAccountFilter,
  ExternalAccountService,
} from "./service.js";

export function externalAccountRoutes(accounts: ExternalAccountService): OperationRoutes {
  const router = new OperationRoutes();
  router.post("/external-accounts", async (req, res) => {
    res.status(201).json(await accounts.create(contextOf(res), bodyOf<ExternalAccountCreate>(req)));
  });
  router.get("/external-accounts", async (req, res) => {
    res.json(await accounts.list(contextOf(res), query<ExternalAccountFilter>(req)));
  });
  router.get("/external-accounts/:id", async (req, res) => {
    res.json(await accounts.get(contextOf(res), param(req, "id")));
  });
  return router;
}
