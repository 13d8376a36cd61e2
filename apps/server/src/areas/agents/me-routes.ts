import { ApiError, invalidInput } from "../../errors.js";
import type { AgentPrincipal, RequestContext } from "../../http/context.js";
import { idempotent, type Handler, type Handlers } from "../../http/operations.js";
import type { IdempotencyStore } from "../../http/idempotency.js";
import { walletHeaders } from "../../signing/headers.js";
import type { ExternalAccountService } from "../external-accounts/service.js";
import type { InternalAccountService } from "../internal-accounts/service.js";
import type { QuoteService } from "../quotes/service.js";
import type { TransactionService } from "../transactions/service.js";
import type { TransferService } from "../transfers/service.js";
import type { AgentPermission } from "./policy.js";
import type { AgentService } from "./service.js";

// The agent's own surface (AgentAuth): thin handlers over the platform's
// services, called with the agent's context, so the same rules apply and
// every read and write is bound to the agent's customer (scopedTo) and its
// policy (policy.ts, usage.ts, actions.ts).
//
// Two refusals are decided here, before the services run, because the
// operations' declared answers decide their status: a paused agent is
// refused on everything but GET /agents/me, and an operation that reads
// without declaring a 403 refuses a missing permission with 401. The
// operations that move money declare 403, and their services refuse it so.

type MeOperation =
  | "getAgentMe"
  | "agentListTransactions"
  | "agentGetTransaction"
  | "agentCreateQuote"
  | "agentGetQuote"
  | "agentExecuteQuote"
  | "agentListActions"
  | "agentGetAction"
  | "agentCreateTransferIn"
  | "agentCreateTransferOut"
  | "agentListInternalAccounts"
  | "agentListExternalAccounts"
  | "agentCreateExternalAccount"
  | "agentGetExternalAccount"
  | "agentDeleteExternalAccount";

/** The permission an operation needs that its own answers cannot refuse with 403. */
const READ_PERMISSION: Partial<Record<MeOperation, AgentPermission>> = {
  agentListTransactions: "VIEW_TRANSACTIONS",
  agentGetTransaction: "VIEW_TRANSACTIONS",
  agentListInternalAccounts: "VIEW_TRANSACTIONS",
  agentGetQuote: "CREATE_QUOTES",
  agentListExternalAccounts: "MANAGE_EXTERNAL_ACCOUNTS",
  agentCreateExternalAccount: "MANAGE_EXTERNAL_ACCOUNTS",
  agentGetExternalAccount: "MANAGE_EXTERNAL_ACCOUNTS",
  agentDeleteExternalAccount: "MANAGE_EXTERNAL_ACCOUNTS",
};

function agentOf(ctx: RequestContext): AgentPrincipal {
  if (!ctx.agent) throw new Error("an AgentAuth operation was called without an agent");
  return ctx.agent;
}

/** Refuses a paused agent, and a read its policy does not grant, with 401. */
function admit(operation: MeOperation, ctx: RequestContext): AgentPrincipal {
  const agent = agentOf(ctx);
  if (agent.isPaused && operation !== "getAgentMe") {
    throw new ApiError(
      401,
      "UNAUTHORIZED",
      "This agent is paused: the platform must resume it before it can act again",
    );
  }
  const permission = READ_PERMISSION[operation];
  if (permission !== undefined && !agent.policy.permissions.includes(permission)) {
    throw new ApiError(401, "UNAUTHORIZED", `This agent's policy does not grant ${permission}`, {
      details: { permission },
    });
  }
  return agent;
}

/** A handler that runs only for an admitted agent. */
function admitted<Op extends MeOperation>(operation: Op, handler: Handler<Op>): Handler<Op> {
  return (input, ctx) => {
    admit(operation, ctx);
    return handler(input, ctx);
  };
}

export interface AgentSurface {
  agents: AgentService;
  transactions: TransactionService;
  quotes: QuoteService;
  transfers: TransferService;
  internalAccounts: InternalAccountService;
  externalAccounts: ExternalAccountService;
  idempotency: IdempotencyStore;
}

export function agentMeRoutes(s: AgentSurface): Handlers<MeOperation> {
  return {
    getAgentMe: admitted("getAgentMe", async (_input, ctx) => ({
      status: 200,
      body: await s.agents.me(ctx),
    })),
    agentListTransactions: admitted("agentListTransactions", async ({ query }, ctx) => ({
      status: 200,
      body: await s.transactions.list(ctx, query),
    })),
    agentGetTransaction: admitted("agentGetTransaction", async ({ params }, ctx) => ({
      status: 200,
      body: await s.transactions.get(ctx, params.transactionId),
    })),
    agentCreateQuote: idempotent(
      s.idempotency,
      admitted("agentCreateQuote", async ({ body }, ctx) => ({
        status: 201,
        body: (await s.quotes.create(ctx, body)).quote,
      })),
    ),
    agentGetQuote: admitted("agentGetQuote", async ({ params }, ctx) => ({
      status: 200,
      body: await s.quotes.get(ctx, params.quoteId),
    })),
    agentExecuteQuote: idempotent(
      s.idempotency,
      admitted("agentExecuteQuote", async ({ params, headers }, ctx) => {
        const quote = await s.quotes.execute(
          ctx,
          params.quoteId,
          walletHeaders(headers).signature,
          undefined,
        );
        const transactionId = quote.transactionId;
        if (transactionId === undefined) throw new Error("an executed quote has no transaction");
        return { status: 200, body: await s.agents.actionOf(ctx, transactionId) };
      }),
    ),
    agentListActions: admitted("agentListActions", async ({ query }, ctx) => ({
      status: 200,
      body: await s.agents.ownActions(ctx, query),
    })),
    agentGetAction: admitted("agentGetAction", async ({ params }, ctx) => ({
      status: 200,
      body: await s.agents.ownAction(ctx, params.actionId),
    })),
    agentCreateTransferIn: idempotent(
      s.idempotency,
      admitted("agentCreateTransferIn", async ({ body }, ctx) => {
        const transaction = await s.transfers.create(ctx, "TRANSFER_IN", {
          internalAccountId: body.destination.accountId,
          externalAccountId: body.source.accountId,
          amount: body.amount,
        });
        return { status: 201, body: await s.agents.actionOf(ctx, transaction.id) };
      }),
    ),
    agentCreateTransferOut: idempotent(
      s.idempotency,
      admitted("agentCreateTransferOut", async ({ body }, ctx) => {
        const transaction = await s.transfers.create(ctx, "TRANSFER_OUT", {
          internalAccountId: body.source.accountId,
          externalAccountId: body.destination.accountId,
          amount: body.amount,
          remittanceInformation: body.remittanceInformation,
        });
        return { status: 201, body: await s.agents.actionOf(ctx, transaction.id) };
      }),
    ),
    agentListInternalAccounts: admitted("agentListInternalAccounts", async ({ query }, ctx) => ({
      status: 200,
      body: await s.internalAccounts.listCustomerAccounts(ctx, query),
    })),
    agentListExternalAccounts: admitted("agentListExternalAccounts", async ({ query }, ctx) => ({
      status: 200,
      body: await s.externalAccounts.list(ctx, "customers", {
        ...query,
        customerId: agentOf(ctx).customerId,
      }),
    })),
    agentCreateExternalAccount: admitted("agentCreateExternalAccount", async ({ body }, ctx) => {
      const { customerId } = agentOf(ctx);
      if (body.customerId !== undefined && body.customerId !== customerId) {
        throw invalidInput(`An agent adds accounts for its own customer, ${customerId}, only`, {
          field: "customerId",
        });
      }
      return {
        status: 201,
        body: await s.externalAccounts.create(ctx, "customers", { ...body, customerId }),
      };
    }),
    agentGetExternalAccount: admitted("agentGetExternalAccount", async ({ params }, ctx) => ({
      status: 200,
      body: await s.externalAccounts.get(ctx, "customers", params.externalAccountId),
    })),
    agentDeleteExternalAccount: admitted("agentDeleteExternalAccount", async ({ params }, ctx) => {
      // Production declares no 409 here: removing a way to pay escalates
      // nothing, so a trusted beneficiary is deleted with its trust.
      await s.externalAccounts.delete(ctx, "customers", params.externalAccountId, "UNTRUST");
      return { status: 204 };
    }),
  };
}
