import { createAgentClient, type Schemas } from "@payments-sandbox/client";
import {
  QUOTE_DESTINATION_TABLE,
  SANDBOX_UMA_HOST,
  UMA_RECEIVER_TABLE,
  quoteDestinationOutcome,
  type PaymentStep,
} from "@payments-sandbox/sandbox-rules";
import { ok, usageError } from "../../context.js";
import {
  advanceClock,
  approvedName,
  customerWithAccount,
  digits,
  fund,
  individual,
  pick,
  type EventType,
  type Flow,
  type FlowContext,
  type FlowOutcome,
} from "./flow.js";

// Money in and out: UMA payments from simulated senders, quotes to external
// accounts whose number's suffix picks the outcome, and a payment an agent
// asks for that waits for the platform's approval.

const RECEIVER_CREATES = {
  customer: "the receiving customer: POST /customers",
  payment: "the simulated payment: POST /sandbox/uma/receive",
} as const;

/** The simulated USD sender whose payments end as `steps` says. */
function sender(wanted: (steps: readonly PaymentStep[]) => boolean): string {
  const row = UMA_RECEIVER_TABLE.rows.find(
    (r) => r.outcome.kind === "RECEIVER" && r.outcome.currency === "USD" && wanted(r.outcome.steps),
  );
  if (!row) throw new Error("the UMA table has no such USD sender");
  return `${row.match}@${SANDBOX_UMA_HOST}`;
}

function incoming(flow: string, senderUmaAddress: string): Flow["run"] {
  return async (ctx) => {
    const { customer, account } = await customerWithAccount(
      ctx,
      individual(approvedName("Pay Receiver")),
    );
    const body = ctx.overrides.apply<Schemas["SandboxUmaReceiveRequest"]>("payment", {
      senderUmaAddress,
      receiverUmaAddress: customer.umaAddress!,
      receivingCurrencyCode: "USD",
      receivingCurrencyAmount: ctx.amount,
    });
    const received = ok(
      "POST /sandbox/uma/receive",
      await ctx.api.POST("/sandbox/uma/receive", { body }),
    );
    ctx.out.step(
      `• ${body.senderUmaAddress} paid ${body.receivingCurrencyAmount} to ${body.receiverUmaAddress}: ${received.status}`,
    );
    return {
      flow,
      customerId: customer.id,
      accountId: account.id,
      transactionId: received.id,
      status: received.status,
    };
  };
}

export const incomingPayment: Flow = {
  summary: "a UMA payment from a simulated sender to a new customer, credited at once",
  events: [
    "CUSTOMER.KYC_APPROVED",
    "INCOMING_PAYMENT.COMPLETED",
    "INTERNAL_ACCOUNT.BALANCE_UPDATED",
  ],
  creates: RECEIVER_CREATES,
  run: incoming(
    "incoming-payment",
    sender((steps) => steps.length === 1 && steps[0]!.status === "COMPLETED"),
  ),
};

export const incomingPaymentPending: Flow = {
  summary: "a UMA payment from a simulated sender whose payments never complete",
  events: ["CUSTOMER.KYC_APPROVED", "INCOMING_PAYMENT.PENDING"],
  creates: RECEIVER_CREATES,
  run: incoming(
    "incoming-payment-pending",
    sender((steps) => steps.length === 0),
  ),
};

export const incomingPaymentFailed: Flow = {
  summary: "a UMA payment from a simulated sender that fails the compliance check",
  events: ["CUSTOMER.KYC_APPROVED", "INCOMING_PAYMENT.FAILED"],
  creates: RECEIVER_CREATES,
  run: incoming(
    "incoming-payment-failed",
    sender((steps) => steps.length === 1 && steps[0]!.status === "FAILED"),
  ),
};

const QUOTE_CREATES = {
  customer: "the sending customer: POST /customers",
  externalAccount: "the receiving bank account: POST /customers/external-accounts",
  quote: "the quote: POST /quotes",
} as const;

/** The event types a quote's payment goes through when its steps are `steps`. */
function paymentEvents(steps: readonly PaymentStep[], advance = true): EventType[] {
  const events: EventType[] = ["OUTGOING_PAYMENT.PENDING"];
  const now = steps.filter(
    (s, i) => s.afterSeconds === 0 && steps.slice(0, i).every((p) => p.afterSeconds === 0),
  );
  const later = steps.slice(now.length);
  const seen = [...(now.length > 0 ? [now.at(-1)!] : []), ...(advance ? later : [])];
  if (now.length === 0) events.push("OUTGOING_PAYMENT.PROCESSING");
  for (const step of seen) {
    events.push(`OUTGOING_PAYMENT.${step.status}`);
    if (step.status === "FAILED") events.push(`OUTGOING_PAYMENT.REFUND_${step.refund.status}`);
  }
  return [...new Set(events)];
}

/** The quote table's rows by their suffix, and "default" for the row no suffix selects. */
export function quoteOutcomes(): FlowOutcome[] {
  return [
    ...QUOTE_DESTINATION_TABLE.rows.map((row) => ({
      name: row.match,
      description: row.description,
      events: paymentEvents(row.outcome.steps),
    })),
    {
      name: "default",
      description: QUOTE_DESTINATION_TABLE.other.description,
      events: paymentEvents(QUOTE_DESTINATION_TABLE.other.outcome.steps),
    },
  ];
}

/** A funded customer, a bank account whose number's suffix is `suffix` (null: none), and a quote to it. */
async function quoteTo(
  ctx: FlowContext,
  suffix: string | null,
  customer: Schemas["CustomerCreateRequestOneOf"],
) {
  const { api, out, overrides, amount } = ctx;
  const accountNumber = pick(
    () => `${digits(9)}${suffix ?? digits(3)}`,
    (n) => quoteDestinationOutcome(n).matched === suffix,
  );
  const holder = await customerWithAccount(ctx, customer);
  await fund(ctx, holder.account.id, amount * 2);
  const externalBody = overrides.apply<Schemas["ExternalAccountCreateRequest"]>("externalAccount", {
    customerId: holder.customer.id,
    currency: "USD",
    accountInfo: {
      accountType: "USD_ACCOUNT",
      accountNumber,
      routingNumber: "021000021",
      beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Quote Receiver" },
    },
  });
  const external = ok(
    "POST /customers/external-accounts",
    await api.POST("/customers/external-accounts", { body: externalBody }),
  );
  const expected = quoteDestinationOutcome(
    (externalBody.accountInfo as { accountNumber?: string }).accountNumber ?? accountNumber,
  ).row;
  out.step(`• External account ${external.id}: ${expected.description}`);
  const quoteBody = overrides.apply<Schemas["QuoteRequest"]>("quote", {
    source: { sourceType: "ACCOUNT", accountId: holder.account.id },
    destination: { destinationType: "ACCOUNT", accountId: external.id },
    lockedCurrencySide: "SENDING",
    lockedCurrencyAmount: amount,
  });
  const quote = ok("POST /quotes", await api.POST("/quotes", { body: quoteBody }));
  out.step(`• Quote ${quote.id}: ${quote.status}, until ${quote.expiresAt}`);
  return { ...holder, external, quote, expected };
}

async function execute(ctx: FlowContext, quoteId: string): Promise<Schemas["Quote"]> {
  const executed = await ctx.api.POST("/quotes/{quoteId}/execute", {
    params: { path: { quoteId }, header: { "Idempotency-Key": `cli-${quoteId}` } },
  });
  const quote = ok("POST /quotes/{quoteId}/execute", executed) as Schemas["Quote"];
  ctx.out.step(`• Quote ${quoteId} executed: ${quote.status}`);
  return quote;
}

async function quoteNow(ctx: FlowContext, quoteId: string): Promise<Schemas["Quote"]> {
  const quote = ok(
    "GET /quotes/{quoteId}",
    await ctx.api.GET("/quotes/{quoteId}", { params: { path: { quoteId } } }),
  );
  ctx.out.step(`• Quote ${quote.id}: ${quote.status}`);
  return quote;
}

export const quote: Flow = {
  summary: "pay a bank account with a quote whose outcome follows the account number's suffix",
  events: paymentEvents(QUOTE_DESTINATION_TABLE.other.outcome.steps),
  creates: QUOTE_CREATES,
  outcomes: quoteOutcomes(),
  async run(ctx) {
    const { outcome = "default", advance } = ctx;
    const row = QUOTE_DESTINATION_TABLE.rows.find((r) => r.match === outcome);
    if (!row && outcome !== "default") {
      const names = quoteOutcomes()
        .map((o) => o.name)
        .join(", ");
      throw usageError(`unknown quote outcome "${outcome}": use one of ${names}`);
    }
    const made = await quoteTo(ctx, row?.match ?? null, individual(approvedName("Quote Sender")));
    const afterExecute = await execute(ctx, made.quote.id);
    const wait = Math.max(0, ...made.expected.outcome.steps.map((step) => step.afterSeconds));
    if (wait > 0 && advance) await advanceClock(ctx, wait, "to the payment's delayed outcome");
    const final = await quoteNow(ctx, made.quote.id);
    return {
      flow: "quote",
      outcome,
      customerId: made.customer.id,
      accountId: made.account.id,
      externalAccountId: made.external.id,
      quoteId: final.id,
      transactionId: final.transactionId,
      statusAfterExecute: afterExecute.status,
      status: final.status,
    };
  },
};

export const quoteExpired: Flow = {
  summary: "a quote left unexecuted until it expires (advances the sandbox clock past its expiry)",
  events: ["OUTGOING_PAYMENT.PENDING", "OUTGOING_PAYMENT.EXPIRED"],
  creates: QUOTE_CREATES,
  async run(ctx) {
    const made = await quoteTo(ctx, null, individual(approvedName("Quote Sender")));
    const seconds =
      Math.ceil((Date.parse(made.quote.expiresAt) - Date.parse(made.quote.createdAt)) / 1000) + 1;
    await advanceClock(ctx, seconds, "past the quote's expiry");
    const final = await quoteNow(ctx, made.quote.id);
    return {
      flow: "quote-expired",
      customerId: made.customer.id,
      quoteId: final.id,
      transactionId: final.transactionId,
      status: final.status,
    };
  },
};

export const agentApproval: Flow = {
  summary:
    "an agent whose policy needs approval asks to send money to a bank account: its action waits for the platform",
  events: ["OUTGOING_PAYMENT.PENDING_AUTHORIZATION", "AGENT_ACTION.PENDING_APPROVAL"],
  creates: {
    customer: "the agent's customer: POST /customers",
    externalAccount: "the receiving bank account: POST /customers/external-accounts",
    agent: "the agent: POST /agents",
    transfer: "the agent's transfer: POST /agents/me/transfer-out",
  },
  async run(ctx) {
    const { api, out, overrides, amount, connection } = ctx;
    const { customer, account } = await customerWithAccount(
      ctx,
      individual(approvedName("Agent Owner")),
    );
    await fund(ctx, account.id, amount * 2);
    const external = ok(
      "POST /customers/external-accounts",
      await api.POST("/customers/external-accounts", {
        body: overrides.apply<Schemas["ExternalAccountCreateRequest"]>("externalAccount", {
          customerId: customer.id,
          currency: "USD",
          accountInfo: {
            accountType: "USD_ACCOUNT",
            accountNumber: pick(
              () => digits(12),
              (n) => quoteDestinationOutcome(n).matched === null,
            ),
            routingNumber: "021000021",
            beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Agent Payee" },
          },
        }),
      }),
    );
    const created = ok(
      "POST /agents",
      await api.POST("/agents", {
        body: overrides.apply<Schemas["AgentCreateRequest"]>("agent", {
          name: "CLI agent",
          customerId: customer.id,
          policy: {
            permissions: ["CREATE_TRANSFERS"],
            defaultExecutionMode: "APPROVAL_REQUIRED",
            spendingLimits: { currency: "USD", perTransactionLimit: amount * 2 },
          },
        }),
      }),
    );
    // The agent software redeems its device code for its own token.
    const redeemed = ok(
      "POST /agents/device-codes/{code}/redeem",
      await createAgentClient({ baseUrl: connection.baseUrl }).POST(
        "/agents/device-codes/{code}/redeem",
        { params: { path: { code: created.deviceCode.code } } },
      ),
    );
    const agent = createAgentClient({
      baseUrl: connection.baseUrl,
      accessToken: redeemed.accessToken,
    });
    out.step(`• Agent ${created.agent.id} connected, policy APPROVAL_REQUIRED`);
    const action = ok(
      "POST /agents/me/transfer-out",
      await agent.POST("/agents/me/transfer-out", {
        body: overrides.apply<Schemas["TransferOutRequest"]>("transfer", {
          source: { accountId: account.id },
          destination: { accountId: external.id },
          amount,
        }),
      }),
    );
    out.step(
      `• Agent asked to send ${amount} to ${external.id}: action ${action.id} ${action.status}`,
    );
    return {
      flow: "agent-approval",
      customerId: customer.id,
      agentId: created.agent.id,
      actionId: action.id,
      status: action.status,
    };
  },
};
