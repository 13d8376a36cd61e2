import type { Handlers } from "../../http/operations.js";
import type { TransactionService } from "./service.js";

export function transactionRoutes(
  transactions: TransactionService,
): Handlers<
  | "listTransactions"
  | "getTransactionById"
  | "approvePendingPayment"
  | "rejectPendingPayment"
  | "cancelTransaction"
  | "confirmReceiptDelivery"
> {
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
    rejectPendingPayment: async ({ params, body }, ctx) => ({
      status: 200,
      // The reason is kept on an agent's action the transaction held, if any.
      body: await transactions.reject(ctx, params.transactionId, { reason: body?.reason }),
    }),
    cancelTransaction: async ({ params }, ctx) => ({
      status: 200,
      body: await transactions.cancel(ctx, params.transactionId),
    }),
    confirmReceiptDelivery: async ({ params, body }, ctx) => ({
      status: 200,
      body: await transactions.confirmReceipt(ctx, params.transactionId, body),
    }),
  };
}
