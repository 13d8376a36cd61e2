import { randomInt } from "node:crypto";
import { isCardDecline, type SandboxClient, type Schemas } from "@payments-sandbox/client";
import {
  INDIVIDUAL_KYC_TABLE,
  QUOTE_DESTINATION_TABLE,
  SANDBOX_UMA_HOST,
  UMA_RECEIVER_TABLE,
  cardAuthorizationOutcome,
  cardFundingSourceOutcome,
  cardIssuanceOutcome,
  individualKycOutcome,
  quoteDestinationOutcome,
} from "@payments-sandbox/sandbox-rules";
import { CliError, ok, usageError, type CommandContext } from "../context.js";
import type { Output } from "../output.js";

// `trigger <flow>` runs one of the sandbox's main flows end to end on the
// platform of the credentials, printing each step. Every value that decides
// an outcome (a name's KYC suffix, a card id, a merchant descriptor, an
// account number's suffix, a simulated UMA sender) is chosen from the
// magic-value tables of @payments-sandbox/sandbox-rules, the same tables the
// sandbox evaluates, so a flow cannot drift from the sandbox's rules.

export interface TriggerOptions {
  amount: number;
  /** quote: the row of the quote table, by its suffix ("default" for the other row). */
  outcome?: string;
  /** quote: leave delayed outcomes pending instead of advancing the clock to them. */
  advance: boolean;
}

interface Flow {
  summary: string;
  run(ctx: CommandContext, options: TriggerOptions): Promise<Record<string, unknown>>;
}

/** The full name an individual customer is APPROVED with at once. */
function approvedName(base: string): string {
  if (individualKycOutcome(base).outcome.kycStatus !== "APPROVED") {
    throw new Error(`"${base}" is not an approved name in the KYC table`);
  }
  return base;
}

/** A full name whose suffix makes an individual customer's KYC PENDING. */
function pendingName(base: string): string {
  const row = INDIVIDUAL_KYC_TABLE.rows.find((r) => r.outcome.kycStatus === "PENDING");
  if (!row) throw new Error("the KYC table has no PENDING row");
  return `${base}${row.match}`;
}

function digits(count: number): string {
  return Array.from({ length: count }, () => randomInt(10)).join("");
}

/** Draws until the value is one the table sends to `wanted`. */
function pick<T>(draw: () => T, wanted: (value: T) => boolean): T {
  for (let i = 0; i < 1000; i++) {
    const value = draw();
    if (wanted(value)) return value;
  }
  throw new Error("no value with the wanted sandbox outcome");
}

interface Holder {
  customer: Schemas["IndividualCustomer"] & { id: string };
  account: Schemas["InternalAccount"];
}

async function customerWithAccount(
  api: SandboxClient,
  out: Output,
  fullName: string,
  options: { fundingSource?: boolean } = {},
): Promise<Holder> {
  // An account id ending in a refused suffix cannot fund a card (about one in
  // 2,000, by chance): a cardholder gets another customer then.
  for (let attempt = 0; attempt < 5; attempt++) {
    const created = ok(
      "POST /customers",
      await api.POST("/customers", {
        body: { customerType: "INDIVIDUAL", fullName, email: "cli@example.com" },
      }),
    );
    if (created.customerType !== "INDIVIDUAL" || !created.id) {
      throw new CliError("POST /customers answered an unexpected customer");
    }
    const customer = { ...created, id: created.id };
    const accounts = ok(
      "GET /customers/internal-accounts",
      await api.GET("/customers/internal-accounts", {
        params: { query: { customerId: customer.id, currency: "USD" } },
      }),
    );
    const account = accounts.data[0];
    if (!account) throw new CliError(`customer ${customer.id} has no USD account`);
    if (options.fundingSource && cardFundingSourceOutcome(account.id).outcome.kind !== "ELIGIBLE") {
      continue;
    }
    out.step(`• Customer ${customer.id} (${fullName}), KYC ${customer.kycStatus}`);
    return { customer, account };
  }
  throw new CliError("could not open an account that may fund a card");
}

async function fund(api: SandboxClient, out: Output, accountId: string, amount: number) {
  const funded = ok(
    "POST /sandbox/internal-accounts/{accountId}/fund",
    await api.POST("/sandbox/internal-accounts/{accountId}/fund", {
      params: { path: { accountId } },
      body: { amount },
    }),
  );
  out.step(`• Funded ${accountId}: balance ${funded.balance.amount}`);
  return funded;
}

const cardPurchase: Flow = {
  summary:
    "issue a card, authorize a purchase and clear it (CARD_TRANSACTION.AUTHORIZED, .SETTLED)",
  async run({ api, out }, { amount }) {
    const { customer, account } = await customerWithAccount(api, out, approvedName("Card Holder"), {
      fundingSource: true,
    });
    await fund(api, out, account.id, amount);
    // A card id the issuer activates at once.
    const platformCardId = pick(
      () => `cli-card-${digits(8)}`,
      (id) => {
        const steps = cardIssuanceOutcome({ platformCardId: id, cardholderId: customer.id }).outcome
          .steps;
        return steps.length === 1 && steps[0]!.state === "ACTIVE" && steps[0]!.afterSeconds === 0;
      },
    );
    const issued = ok(
      "POST /cards",
      await api.POST("/cards", {
        body: {
          cardholderId: customer.id,
          platformCardId,
          form: "VIRTUAL",
          fundingSources: [account.id],
        },
      }),
    );
    const card = ok(
      "GET /cards/{id}",
      await api.GET("/cards/{id}", { params: { path: { id: issued.id } } }),
    );
    out.step(`• Card ${card.id} issued, ${card.state}, ending in ${card.last4}`);
    // A merchant whose purchase is approved with a pull that confirms at once.
    const descriptor = pick(
      () => `CLI COFFEE ${digits(4)}`,
      (d) => {
        const outcome = cardAuthorizationOutcome(d).outcome;
        return (
          outcome.kind === "APPROVE" &&
          outcome.pull.pullStatus === "CONFIRMED" &&
          outcome.pull.afterSeconds === 0
        );
      },
    );
    const authorized = ok(
      "POST /sandbox/cards/{id}/simulate/authorization",
      await api.POST("/sandbox/cards/{id}/simulate/authorization", {
        params: { path: { id: card.id } },
        body: {
          amount,
          currency: { code: "USD" },
          merchant: { descriptor, mcc: "5814", country: "US" },
        },
      }),
    );
    // A decline makes no card transaction: the simulation answers it alone.
    if (isCardDecline(authorized)) {
      throw new CliError(
        `The authorization at ${descriptor} was declined: ${authorized.declineReason} (${authorized.reason})`,
      );
    }
    out.step(
      `• Authorized ${authorized.authorizedAmount.amount} at ${descriptor}: ${authorized.status}`,
    );
    const cleared = ok(
      "POST /sandbox/cards/{id}/simulate/clearing",
      await api.POST("/sandbox/cards/{id}/simulate/clearing", {
        params: { path: { id: card.id } },
        body: { cardTransactionId: authorized.id, amount },
      }),
    );
    out.step(`• Cleared ${cleared.settledAmount?.amount ?? amount}: ${cleared.status}`);
    return {
      flow: "card-purchase",
      customerId: customer.id,
      accountId: account.id,
      cardId: card.id,
      cardTransactionId: cleared.id,
      status: cleared.status,
    };
  },
};

const incomingPayment: Flow = {
  summary: "a UMA payment from a simulated sender to a new customer (INCOMING_PAYMENT.COMPLETED)",
  async run({ api, out }, { amount }) {
    const { customer, account } = await customerWithAccount(api, out, approvedName("Pay Receiver"));
    // A simulated sender in USD whose payments complete at once.
    const sender = UMA_RECEIVER_TABLE.rows.find(
      (row) =>
        row.outcome.kind === "RECEIVER" &&
        row.outcome.currency === "USD" &&
        row.outcome.steps.length === 1 &&
        row.outcome.steps[0]!.status === "COMPLETED",
    );
    if (!sender) throw new Error("the UMA table has no USD sender that completes");
    const senderUmaAddress = `${sender.match}@${SANDBOX_UMA_HOST}`;
    const received = ok(
      "POST /sandbox/uma/receive",
      await api.POST("/sandbox/uma/receive", {
        body: {
          senderUmaAddress,
          receiverUmaAddress: customer.umaAddress!,
          receivingCurrencyCode: "USD",
          receivingCurrencyAmount: amount,
        },
      }),
    );
    out.step(`• ${senderUmaAddress} paid ${amount} to ${customer.umaAddress}: ${received.status}`);
    return {
      flow: "incoming-payment",
      customerId: customer.id,
      accountId: account.id,
      transactionId: received.id,
      status: received.status,
    };
  },
};

const kyc: Flow = {
  summary:
    "a customer created with KYC PENDING, then approved on the hosted KYC page (CUSTOMER.KYC_PENDING, .KYC_APPROVED)",
  async run({ api, out }) {
    const { customer } = await customerWithAccount(api, out, pendingName("Kyc Applicant"));
    if (customer.kycStatus !== "PENDING") {
      throw new CliError(`expected KYC PENDING, got ${customer.kycStatus}`);
    }
    const link = ok(
      "POST /customers/{customerId}/kyc-link",
      await api.POST("/customers/{customerId}/kyc-link", {
        params: { path: { customerId: customer.id } },
      }),
    );
    // The hosted page decides from the full name entered, as the table says.
    const page = await fetch(link.kycUrl, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ value: approvedName("Kyc Applicant") }).toString(),
      redirect: "manual",
    });
    if (!page.ok) throw new CliError(`the hosted KYC page answered ${page.status}`);
    const after = ok(
      "GET /customers/{customerId}",
      await api.GET("/customers/{customerId}", {
        params: { path: { customerId: customer.id } },
      }),
    );
    const status = after.customerType === "INDIVIDUAL" ? after.kycStatus : undefined;
    out.step(`• Submitted the hosted KYC page: KYC ${status}`);
    return { flow: "kyc", customerId: customer.id, kycStatus: status };
  },
};

/** The quote table's rows by their suffix, and "default" for the row no suffix selects. */
export function quoteOutcomes(): { name: string; description: string }[] {
  return [
    ...QUOTE_DESTINATION_TABLE.rows.map((row) => ({
      name: row.match,
      description: row.description,
    })),
    { name: "default", description: QUOTE_DESTINATION_TABLE.other.description },
  ];
}

const quote: Flow = {
  summary: "pay an external account with a quote whose outcome follows the account number's suffix",
  async run({ api, out }, { amount, outcome = "default", advance }) {
    const row = QUOTE_DESTINATION_TABLE.rows.find((r) => r.match === outcome);
    if (!row && outcome !== "default") {
      const names = quoteOutcomes()
        .map((o) => o.name)
        .join(", ");
      throw usageError(`unknown quote outcome "${outcome}": use one of ${names}`);
    }
    const accountNumber = pick(
      () => `${digits(9)}${row?.match ?? digits(3)}`,
      (n) => quoteDestinationOutcome(n).matched === (row?.match ?? null),
    );
    const expected = quoteDestinationOutcome(accountNumber).row;
    const { customer, account } = await customerWithAccount(api, out, approvedName("Quote Sender"));
    await fund(api, out, account.id, amount * 2);
    const external = ok(
      "POST /customers/external-accounts",
      await api.POST("/customers/external-accounts", {
        body: {
          customerId: customer.id,
          currency: "USD",
          accountInfo: {
            accountType: "USD_ACCOUNT",
            accountNumber,
            routingNumber: "021000021",
            beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: "Quote Receiver" },
          },
        },
      }),
    );
    out.step(
      `• External account ${external.id} (number ${accountNumber}): ${expected.description}`,
    );
    const created = ok(
      "POST /quotes",
      await api.POST("/quotes", {
        body: {
          source: { sourceType: "ACCOUNT", accountId: account.id },
          destination: { destinationType: "ACCOUNT", accountId: external.id },
          lockedCurrencySide: "SENDING",
          lockedCurrencyAmount: amount,
        },
      }),
    );
    const executed = await api.POST("/quotes/{quoteId}/execute", {
      params: { path: { quoteId: created.id }, header: { "Idempotency-Key": `cli-${created.id}` } },
    });
    const afterExecute = ok("POST /quotes/{quoteId}/execute", executed) as Schemas["Quote"];
    out.step(`• Quote ${created.id} executed: ${afterExecute.status}`);
    const wait = Math.max(0, ...expected.outcome.steps.map((step) => step.afterSeconds));
    if (wait > 0 && advance) {
      const moved = ok(
        "POST /sandbox/clock/advance",
        await api.POST("/sandbox/clock/advance", { body: { seconds: wait } }),
      );
      out.step(
        `• Advanced the sandbox clock ${wait}s: ${moved.jobsRun} delayed outcome(s) applied`,
      );
    }
    const final = ok(
      "GET /quotes/{quoteId}",
      await api.GET("/quotes/{quoteId}", { params: { path: { quoteId: created.id } } }),
    );
    out.step(`• Quote ${final.id}: ${final.status}`);
    return {
      flow: "quote",
      outcome,
      customerId: customer.id,
      accountId: account.id,
      externalAccountId: external.id,
      quoteId: final.id,
      transactionId: final.transactionId,
      statusAfterExecute: afterExecute.status,
      status: final.status,
    };
  },
};

export const FLOWS: Record<string, Flow> = {
  "card-purchase": cardPurchase,
  "incoming-payment": incomingPayment,
  kyc,
  quote,
};

export async function trigger(ctx: CommandContext, flowName: string, options: TriggerOptions) {
  const flow = FLOWS[flowName];
  if (!flow) {
    throw usageError(`unknown flow "${flowName}": use one of ${Object.keys(FLOWS).join(", ")}`);
  }
  ctx.out.step(`Triggering ${flowName}: ${flow.summary}`);
  const result = await flow.run(ctx, options);
  ctx.out.result(result, () => [
    `${ctx.out.ok("✔")} ${flowName} done; \`payments-sandbox events list\` shows its webhooks`,
  ]);
}
