import type { Handlers } from "../../http/operations.js";
import type { CustomerService } from "./service.js";

export function customerRoutes(
  customers: CustomerService,
): Handlers<"createCustomer" | "listCustomers" | "getCustomerById"> {
  return {
    createCustomer: async ({ body }, ctx) => ({
      status: 201,
      body: await customers.create(ctx, body),
    }),
    listCustomers: async ({ query }, ctx) => ({
      status: 200,
      body: await customers.list(ctx, query),
    }),
    getCustomerById: async ({ params }, ctx) => ({
      status: 200,
      body: await customers.get(ctx, params.customerId),
    }),
  };
}
