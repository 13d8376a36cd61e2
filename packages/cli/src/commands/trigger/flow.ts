import { randomInt } from "node:crypto";
import { isCardDecline, type SandboxClient, type Schemas } from "@payments-sandbox/client";
import {
  CARD_AUTHORIZATION_TABLE,
  INDIVIDUAL_KYC_TABLE,
  cardAuthorizationOutcome,
  cardFundingSourceOutcome,
  cardIssuanceOutcome,
  individualKycOutcome,
  type CardAuthorizationOutcome,
} from "@payments-sandbox/sandbox-rules";
import { CliError, ok, type Connection } from "../../context.js";
import type { Output } from "../../output.js";
import type { Overrides } from "./overrides.js";

// What every flow is made of, and the steps several flows share. Every value
// that decides an outcome (a name's KYC suffix, a card id, a merchant
// descriptor, an account number's suffix, a simulated UMA sender) is chosen
// from the magic-value tables of @payments-sandbox/sandbox-rules, the same
// tables the sandbox evaluates, so a flow cannot drift from the sandbox's rules.

export type EventType = Schemas["WebhookEventType"];

export interface FlowContext {
  api: SandboxClient;
  out: Output;
  connection: Connection;
  amount: number;
  /** quote: the row of the quote table, by its suffix ("default" for the other row). */
  outcome?: string;
  /** Reach delayed outcomes by advancing the sandbox clock (off with --no-advance). */
  advance: boolean;
  overrides: Overrides;
}

export interface FlowOutcome {
  name: string;
  description: string;
  events: readonly EventType[];
}

export interface Flow {
  summary: string;
  /** The event types `trigger <flow>` causes, with its default options. */
  events: readonly EventType[];
  /** The objects it creates, by the name `--override <name>.<field>=value` uses: the request each is made with. */
  creates: Readonly<Record<string, string>>;
  /** Flows with `--outcome`: each outcome and the event types it causes instead of `events`. */
  outcomes?: readonly FlowOutcome[];
  run(ctx: FlowContext): Promise<Record<string, unknown>>;
}

/** The full name an individual customer is APPROVED with at once. */
export function approvedName(base: string): string {
  if (individualKycOutcome(base).outcome.kycStatus !== "APPROVED") {
    throw new Error(`"${base}" is not an approved name in the KYC table`);
  }
  return base;
}

/** A full name whose suffix gives an individual customer this KYC status at creation. */
export function nameWithKyc(base: string, status: "PENDING" | "REJECTED" | "UNVERIFIED"): string {
  const row = INDIVIDUAL_KYC_TABLE.rows.find((r) => r.outcome.kycStatus === status);
  if (!row) throw new Error(`the KYC table has no ${status} row`);
  return `${base}${row.match}`;
}

export function digits(count: number): string {
  return Array.from({ length: count }, () => randomInt(10)).join("");
}

/** Draws until the value is one the table sends to `wanted`. */
export function pick<T>(draw: () => T, wanted: (value: T) => boolean): T {
  for (let i = 0; i < 1000; i++) {
    const value = draw();
    if (wanted(value)) return value;
  }
  throw new Error("no value with the wanted sandbox outcome");
}

export interface Holder {
  customer: Schemas["CustomerOneOf"] & { id: string };
  account: Schemas["InternalAccount"];
}

export type CustomerBody = Schemas["CustomerCreateRequestOneOf"];

/** POST /customers with the `customer` overrides, answering the customer and its USD account. */
export async function customerWithAccount(
  { api, out, overrides }: FlowContext,
  defaults: CustomerBody,
  options: { fundingSource?: boolean } = {},
): Promise<Holder> {
  const body = overrides.apply("customer", defaults);
  // An account id ending in a refused suffix cannot fund a card (about one in
  // 2,000, by chance): a cardholder gets another customer then.
  for (let attempt = 0; attempt < 5; attempt++) {
    const created = ok("POST /customers", await api.POST("/customers", { body }));
    if (!created.id) throw new CliError("POST /customers answered a customer without an id");
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
    const status =
      customer.customerType === "INDIVIDUAL"
        ? `KYC ${customer.kycStatus}`
        : `KYB ${customer.kybStatus}`;
    out.step(`• Customer ${customer.id}, ${status}`);
    return { customer, account };
  }
  throw new CliError("could not open an account that may fund a card");
}

export function individual(fullName: string): CustomerBody {
  return { customerType: "INDIVIDUAL", fullName, email: "cli@example.com" };
}

export async function fund(
  { api, out }: FlowContext,
  accountId: string,
  amount: number,
): Promise<void> {
  const funded = ok(
    "POST /sandbox/internal-accounts/{accountId}/fund",
    await api.POST("/sandbox/internal-accounts/{accountId}/fund", {
      params: { path: { accountId } },
      body: { amount },
    }),
  );
  out.step(`• Funded ${accountId}: balance ${funded.balance.amount}`);
}

export async function advanceClock(
  { api, out }: FlowContext,
  seconds: number,
  why: string,
): Promise<void> {
  const moved = ok(
    "POST /sandbox/clock/advance",
    await api.POST("/sandbox/clock/advance", { body: { seconds } }),
  );
  out.step(`• Advanced the sandbox clock ${seconds}s (${why}): ${moved.jobsRun} job(s) run`);
}

/** A funded cardholder with a card the issuer activates at once (`customer`, `card` overrides). */
export async function activeCard(ctx: FlowContext, name: string) {
  const { api, out, overrides, amount } = ctx;
  const holder = await customerWithAccount(ctx, individual(approvedName(name)), {
    fundingSource: true,
  });
  await fund(ctx, holder.account.id, amount * 2);
  const platformCardId = pick(
    () => `cli-card-${digits(8)}`,
    (id) => {
      const steps = cardIssuanceOutcome({ platformCardId: id, cardholderId: holder.customer.id })
        .outcome.steps;
      return steps.length === 1 && steps[0]!.state === "ACTIVE" && steps[0]!.afterSeconds === 0;
    },
  );
  const body = overrides.apply<Schemas["CardCreateRequest"]>("card", {
    cardholderId: holder.customer.id,
    platformCardId,
    form: "VIRTUAL",
    fundingSources: [holder.account.id],
  });
  const issued = ok("POST /cards", await api.POST("/cards", { body }));
  const card = ok(
    "GET /cards/{id}",
    await api.GET("/cards/{id}", { params: { path: { id: issued.id } } }),
  );
  out.step(`• Card ${card.id} issued, ${card.state}, ending in ${card.last4}`);
  return { ...holder, card };
}

/** A merchant descriptor whose authorization the table decides as `wanted` says. */
export function merchantDescriptor(wanted: (outcome: CardAuthorizationOutcome) => boolean): string {
  const row = CARD_AUTHORIZATION_TABLE.rows.find((r) => wanted(r.outcome));
  if (row) return `CLI COFFEE ${row.match}`;
  return pick(
    () => `CLI COFFEE ${digits(4)}`,
    (d) => wanted(cardAuthorizationOutcome(d).outcome),
  );
}

/** An approved purchase whose pull confirms at once. */
export const approvedAtOnce = merchantDescriptor((o) => {
  return o.kind === "APPROVE" && o.pull.pullStatus === "CONFIRMED" && o.pull.afterSeconds === 0;
});

/** POST /sandbox/cards/{id}/simulate/authorization (`authorization` overrides). */
export async function authorize(ctx: FlowContext, cardId: string, descriptor: string) {
  const body = ctx.overrides.apply<Schemas["SandboxCardAuthorizationRequest"]>("authorization", {
    amount: ctx.amount,
    currency: { code: "USD" },
    merchant: { descriptor, mcc: "5814", country: "US" },
  });
  const authorized = ok(
    "POST /sandbox/cards/{id}/simulate/authorization",
    await ctx.api.POST("/sandbox/cards/{id}/simulate/authorization", {
      params: { path: { id: cardId } },
      body,
    }),
  );
  // A decline makes no card transaction: the simulation answers it alone.
  if (isCardDecline(authorized)) {
    throw new CliError(
      `The authorization at ${body.merchant.descriptor} was declined: ${authorized.declineReason} (${authorized.reason})`,
    );
  }
  ctx.out.step(
    `• Authorized ${authorized.authorizedAmount.amount} at ${body.merchant.descriptor}: ${authorized.status}`,
  );
  return authorized;
}

/** POST /sandbox/cards/{id}/simulate/clearing (`clearing` overrides). */
export async function clear(
  ctx: FlowContext,
  cardId: string,
  cardTransactionId: string,
  amount: number,
) {
  const body = ctx.overrides.apply<Schemas["SandboxCardClearingRequest"]>("clearing", {
    cardTransactionId,
    amount,
  });
  const cleared = ok(
    "POST /sandbox/cards/{id}/simulate/clearing",
    await ctx.api.POST("/sandbox/cards/{id}/simulate/clearing", {
      params: { path: { id: cardId } },
      body,
    }),
  );
  ctx.out.step(`• Cleared ${body.amount}: ${cleared.status}`);
  return cleared;
}
