import { usageError, type CommandContext } from "../context.js";
import { cardException, cardPartialSettlement, cardPurchase, cardRefund } from "./trigger/cards.js";
import {
  bulkImport,
  bulkImportFailed,
  kyc,
  kybApproved,
  kybPending,
  kybRejected,
  kycRejected,
  verificationResolveErrors,
} from "./trigger/customers.js";
import type { EventType, Flow } from "./trigger/flow.js";
import { Overrides, type Override } from "./trigger/overrides.js";
import {
  agentApproval,
  incomingPayment,
  incomingPaymentFailed,
  incomingPaymentPending,
  quote,
  quoteExpired,
} from "./trigger/payments.js";
import { externalAccountLiveness, invitationClaimed, testWebhook } from "./trigger/platform.js";

export { quoteOutcomes } from "./trigger/payments.js";
export { parseOverride } from "./trigger/overrides.js";

// `trigger <flow>` runs one of the sandbox's flows end to end on the platform
// of the credentials, printing each step; together the flows cause every
// webhook event type the sandbox sends. `trigger --list` says which flow
// causes which, and what each creates (the names `--override` takes).

export const FLOWS: Record<string, Flow> = {
  "card-purchase": cardPurchase,
  "card-partial-settlement": cardPartialSettlement,
  "card-refund": cardRefund,
  "card-exception": cardException,
  "incoming-payment": incomingPayment,
  "incoming-payment-pending": incomingPaymentPending,
  "incoming-payment-failed": incomingPaymentFailed,
  quote,
  "quote-expired": quoteExpired,
  "agent-approval": agentApproval,
  kyc,
  "kyc-rejected": kycRejected,
  "verification-resolve-errors": verificationResolveErrors,
  kyb: kybApproved,
  "kyb-pending": kybPending,
  "kyb-rejected": kybRejected,
  "bulk-import": bulkImport,
  "bulk-import-failed": bulkImportFailed,
  "external-account-liveness": externalAccountLiveness,
  "invitation-claimed": invitationClaimed,
  "test-webhook": testWebhook,
};

/** Event types of the contract that no flow causes, and why. */
export const NOT_TRIGGERED: Readonly<Partial<Record<EventType, string>>> = {
  "CARD.FUNDING_SOURCE_CHANGE":
    "needs a second account of the cardholder in the card's currency, and the API opens one account per currency",
  "INCOMING_PAYMENT.REFUND_PENDING": "the sandbox never refunds an incoming payment",
  "INCOMING_PAYMENT.REFUND_COMPLETED": "the sandbox never refunds an incoming payment",
  "INCOMING_PAYMENT.REFUND_FAILED": "the sandbox never refunds an incoming payment",
  "OUTGOING_PAYMENT.REFUND_PENDING":
    "the sandbox settles a refund at once (REFUND_COMPLETED or REFUND_FAILED)",
  "VERIFICATION.IN_PROGRESS": "the sandbox decides a verification at once",
  "INTERNAL_ACCOUNT.STATUS_UPDATED": "the sandbox never changes an internal account's status",
  "INTERNAL_ACCOUNT.FUNDING_INSTRUCTIONS_UPDATED":
    "the sandbox never changes an account's funding instructions",
};

/** Parameters every flow takes besides the objects it creates. */
const PARAMETERS = ["amount"] as const;

export interface TriggerOptions {
  amount?: number;
  outcome?: string;
  advance: boolean;
  overrides: readonly Override[];
}

function flowNamed(name: string): Flow {
  const flow = FLOWS[name];
  if (!flow) {
    throw usageError(
      `unknown flow "${name}": use one of ${Object.keys(FLOWS).join(", ")} (trigger --list says what each does)`,
    );
  }
  return flow;
}

function positiveInteger(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw usageError(`${what} must be a whole number of at least 1`);
  }
  return value;
}

export async function trigger(ctx: CommandContext, flowName: string, options: TriggerOptions) {
  const flow = flowNamed(flowName);
  if (options.outcome !== undefined && !flow.outcomes) {
    throw usageError(`--outcome is for quote only; ${flowName} has one outcome`);
  }
  const overrides = new Overrides(
    options.overrides,
    { objects: Object.keys(flow.creates), parameters: PARAMETERS },
    flowName,
  );
  const overridden = overrides.parameter("amount");
  if (overridden !== undefined && options.amount !== undefined) {
    throw usageError("give the amount once: --amount or --override amount=…");
  }
  const amount =
    overridden !== undefined
      ? positiveInteger(overridden, "--override amount")
      : (options.amount ?? 2500);
  ctx.out.step(`Triggering ${flowName}: ${flow.summary}`);
  const result = await flow.run({
    api: ctx.api,
    out: ctx.out,
    connection: ctx.connection,
    amount,
    advance: options.advance,
    overrides,
    ...(options.outcome !== undefined ? { outcome: options.outcome } : {}),
  });
  ctx.out.result(result, () => [
    `${ctx.out.ok("✔")} ${flowName} done; \`payments-sandbox events list\` shows its webhooks`,
  ]);
}

export interface FlowListing {
  flow: string;
  summary: string;
  events: readonly EventType[];
  creates: Readonly<Record<string, string>>;
  outcomes?: { outcome: string; description: string; events: readonly EventType[] }[];
}

export function flowListing(): { flows: FlowListing[]; notTriggered: Record<string, string> } {
  return {
    flows: Object.entries(FLOWS).map(([name, flow]) => ({
      flow: name,
      summary: flow.summary,
      events: flow.events,
      creates: flow.creates,
      ...(flow.outcomes
        ? {
            outcomes: flow.outcomes.map((o) => ({
              outcome: o.name,
              description: o.description.replaceAll("`", ""),
              events: o.events,
            })),
          }
        : {}),
    })),
    notTriggered: { ...NOT_TRIGGERED } as Record<string, string>,
  };
}

/** `trigger --list`: each flow, what it does, the event types it causes, and what it creates. */
export function listFlows(out: CommandContext["out"]): void {
  const listing = flowListing();
  out.result(listing, () => {
    const lines: string[] = [];
    for (const flow of listing.flows) {
      lines.push(`${out.ok(flow.flow)}  ${flow.summary}`);
      lines.push(`    events:    ${flow.events.join(", ")}`);
      for (const o of flow.outcomes ?? []) {
        lines.push(`    --outcome ${o.outcome.padEnd(8)} ${o.events.join(", ")}`);
      }
      const creates = Object.entries(flow.creates).map(([name, what]) => `${name} (${what})`);
      lines.push(`    overrides: ${[...creates, "amount"].join("; ")}`);
    }
    lines.push("", "Not caused by any flow:");
    for (const [type, why] of Object.entries(listing.notTriggered)) {
      lines.push(`    ${type}: ${why}`);
    }
    return lines;
  });
}
