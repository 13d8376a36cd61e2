import type { Handlers } from "../../http/operations.js";
import type { CardTransactionService } from "./service.js";

/** Sandbox only: card network events (x-sandbox-only in openapi.yaml). */
export function cardSimulationRoutes(
  transactions: CardTransactionService,
): Handlers<
  | "sandboxSimulateCardAuthorization"
  | "sandboxSimulateCardClearing"
  | "sandboxSimulateCardReturn"
  | "sandboxSimulateCardIncrement"
  | "sandboxSimulateCardReversal"
  | "sandboxSimulateCardBalanceInquiry"
  | "sandboxSimulateCardCreditAuthorization"
  | "sandboxSimulateCardFinancialAuthorization"
  | "sandboxSimulateCardFinancialCreditAuthorization"
  | "sandboxSimulateCardAuthorizationAdvice"
  | "sandboxSimulateCardCreditAuthorizationAdvice"
  | "sandboxSimulateCardReturnReversal"
> {
  return {
    sandboxSimulateCardAuthorization: async ({ params, body }, ctx) => ({
      status: 202,
      body: await transactions.authorize(ctx, params.id, body),
    }),
    sandboxSimulateCardClearing: async ({ params, body }, ctx) => ({
      status: 202,
      body: await transactions.clear(ctx, params.id, body),
    }),
    sandboxSimulateCardReturn: async ({ params, body }, ctx) => ({
      status: 202,
      body: await transactions.refund(ctx, params.id, body),
    }),
    sandboxSimulateCardIncrement: async ({ params, body }, ctx) => ({
      status: 200,
      body: await transactions.increment(ctx, params.id, body),
    }),
    sandboxSimulateCardReversal: async ({ params, body }, ctx) => ({
      status: 200,
      body: await transactions.reverse(ctx, params.id, body),
    }),
    sandboxSimulateCardBalanceInquiry: async ({ params, body }, ctx) => ({
      status: 202,
      body: await transactions.balanceInquiry(ctx, params.id, body),
    }),
    sandboxSimulateCardCreditAuthorization: async ({ params, body }, ctx) => ({
      status: 202,
      body: await transactions.credit(ctx, params.id, body, "CREDIT_AUTHORIZATION"),
    }),
    sandboxSimulateCardFinancialAuthorization: async ({ params, body }, ctx) => ({
      status: 202,
      body: await transactions.financialAuthorization(ctx, params.id, body),
    }),
    sandboxSimulateCardFinancialCreditAuthorization: async ({ params, body }, ctx) => ({
      status: 202,
      body: await transactions.credit(ctx, params.id, body, "FINANCIAL_CREDIT_AUTHORIZATION"),
    }),
    sandboxSimulateCardAuthorizationAdvice: async ({ params, body }, ctx) => ({
      status: 202,
      body: await transactions.authorizationAdvice(ctx, params.id, body),
    }),
    sandboxSimulateCardCreditAuthorizationAdvice: async ({ params, body }, ctx) => ({
      status: 202,
      body: await transactions.credit(ctx, params.id, body, "CREDIT_AUTHORIZATION_ADVICE"),
    }),
    sandboxSimulateCardReturnReversal: async ({ params, body }, ctx) => ({
      status: 202,
      body: await transactions.returnReversal(ctx, params.id, body),
    }),
  };
}
