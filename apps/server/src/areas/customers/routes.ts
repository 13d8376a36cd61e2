import { OperationRoutes } from "../../http/operations.js";
import { contextOf, bodyOf } from "../../http/context.js";
import { param, query } from "../../http/route-helpers.js";
import type { CustomerCreate, CustomerFilter, CustomerService } from "./service.js";

export function customerRoutes(customers: CustomerService): OperationRoutes {
  const router = new OperationRoutes();
  router.post("/customers", async (req, res) => {
    res.status(201).json(await customers.create(contextOf(res), bodyOf<CustomerCreate>(req)));
  });
  router.get("/customers", async (req, res) => {
    res.json(await customers.list(contextOf(res), query<CustomerFilter>(req)));
  });
  router.get("/customers/:customerId", async (req, res) => {
    res.json(await customers.get(contextOf(res), param(req, "customerId")));
  });
  return router;
}
