import type { Schemas } from "@payments-sandbox/client";
import { ok } from "../../context.js";
import {
  activeCard,
  approvedAtOnce,
  authorize,
  clear,
  merchantDescriptor,
  type Flow,
  type FlowContext,
} from "./flow.js";

// Card flows: a funded cardholder, a card that activates at once, and a
// simulated purchase whose merchant descriptor picks the network's answer.

const CARD_CREATES = {
  customer: "the cardholder: POST /customers",
  card: "the card: POST /cards",
  authorization: "the purchase: POST /sandbox/cards/{id}/simulate/authorization",
} as const;

/** The events every card flow causes before its purchase. */
const CARD_SETUP = [
  "CUSTOMER.KYC_APPROVED",
  "INTERNAL_ACCOUNT.BALANCE_UPDATED",
  "CARD.STATE_CHANGE",
  "CARD_TRANSACTION.AUTHORIZED",
] as const;

async function purchase(ctx: FlowContext, name: string, descriptor = approvedAtOnce) {
  const { customer, account, card } = await activeCard(ctx, name);
  const authorized = await authorize(ctx, card.id, descriptor);
  return { customerId: customer.id, accountId: account.id, cardId: card.id, authorized };
}

function done(flow: string, ids: Record<string, unknown>, transaction: Schemas["CardTransaction"]) {
  return { flow, ...ids, cardTransactionId: transaction.id, status: transaction.status };
}

export const cardPurchase: Flow = {
  summary: "issue a card, authorize a purchase and clear it in full",
  events: [...CARD_SETUP, "CARD_TRANSACTION.SETTLED"],
  creates: {
    ...CARD_CREATES,
    clearing: "the clearing: POST /sandbox/cards/{id}/simulate/clearing",
  },
  async run(ctx) {
    const { authorized, ...ids } = await purchase(ctx, "Card Holder");
    const cleared = await clear(ctx, ids.cardId, authorized.id, ctx.amount);
    return done("card-purchase", ids, cleared);
  },
};

export const cardPartialSettlement: Flow = {
  summary: "a purchase cleared for half its amount (the rest stays held)",
  events: [...CARD_SETUP, "CARD_TRANSACTION.PARTIALLY_SETTLED"],
  creates: {
    ...CARD_CREATES,
    clearing: "the clearing: POST /sandbox/cards/{id}/simulate/clearing",
  },
  async run(ctx) {
    const { authorized, ...ids } = await purchase(ctx, "Card Holder");
    const half = Math.max(1, Math.floor(authorized.authorizedAmount.amount / 2));
    const cleared = await clear(ctx, ids.cardId, authorized.id, half);
    return done("card-partial-settlement", ids, cleared);
  },
};

export const cardRefund: Flow = {
  summary: "a purchase cleared in full, then returned by the merchant in full",
  events: [...CARD_SETUP, "CARD_TRANSACTION.SETTLED", "CARD_TRANSACTION.REFUNDED"],
  creates: {
    ...CARD_CREATES,
    clearing: "the clearing: POST /sandbox/cards/{id}/simulate/clearing",
    return: "the merchant's return: POST /sandbox/cards/{id}/simulate/return",
  },
  async run(ctx) {
    const { authorized, ...ids } = await purchase(ctx, "Card Holder");
    const cleared = await clear(ctx, ids.cardId, authorized.id, ctx.amount);
    const body = ctx.overrides.apply<Schemas["SandboxCardReturnRequest"]>("return", {
      cardTransactionId: cleared.id,
      amount: cleared.settledAmount?.amount ?? ctx.amount,
    });
    const returned = ok(
      "POST /sandbox/cards/{id}/simulate/return",
      await ctx.api.POST("/sandbox/cards/{id}/simulate/return", {
        params: { path: { id: ids.cardId } },
        body,
      }),
    );
    ctx.out.step(`• Returned ${body.amount}: ${returned.status}`);
    return done("card-refund", ids, returned);
  },
};

export const cardException: Flow = {
  summary: "a purchase approved whose pull on the funding source fails (an exception to resolve)",
  events: [
    ...CARD_SETUP.filter((e) => e !== "CARD_TRANSACTION.AUTHORIZED"),
    "CARD_TRANSACTION.EXCEPTION",
  ],
  creates: CARD_CREATES,
  async run(ctx) {
    const failedPull = merchantDescriptor(
      (o) => o.kind === "APPROVE" && o.pull.pullStatus === "FAILED" && o.pull.afterSeconds === 0,
    );
    const { authorized, ...ids } = await purchase(ctx, "Card Holder", failedPull);
    return done("card-exception", ids, authorized);
  },
};
