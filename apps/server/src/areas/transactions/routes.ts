import type { Handlers } from "../../http/operations.js";
import type { TransactionService } from "./service.js";

export function transactionRoutes(
  transactions: TransactionService,
): Handlers<"listTransactions" | "getTransactionById" | "approvePendingPayment"> {
  return {
    listTransactions: async ({ query }, ctx) => ({
      status: 200,
      body: await transactions.list(ctx, query),
    }),
    getTransactionById: async ({ params }, ctx) => ({
      status: 200,
      body: await transactions.get(ctx, params.transactionId),
    }),
    approvePendingPayment: async ({ params }, ctx) => ({
      status: 200,
      body: await transactions.approve(ctx, params.transactionId),
    }),
  };
}
