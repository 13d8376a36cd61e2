/** Cards: how an issued card leaves PROCESSING, which accounts can fund it, and authorizations. */
import { CARD_LAST4_PREFIX, cardLast4 } from "../cards.js";
import type {
  CardAuthorizationOutcome,
  CardFundingSourceOutcome,
  CardIssuanceOutcome,
} from "../outcomes.js";
import type { MagicTable } from "../types.js";

/** Seconds a card with suffix 005 takes to activate. */
export const CARD_DELAYED_ACTIVATION_SECONDS = 30;
/** Seconds a card pull with descriptor suffix 005 stays pending before it confirms. */
export const CARD_DELAYED_PULL_SECONDS = 30;

export const CARD_ISSUANCE_TABLE: MagicTable<CardIssuanceOutcome> = {
  id: "cardIssuance",
  title: "Card issuance",
  description:
    "Decides how a card created with `POST /cards` leaves `PROCESSING`. Each state change emits `CARD.STATE_CHANGE`. Times count from creation.",
  appliesTo: "`POST /cards`",
  field: "`platformCardId` (`cardholderId` when `platformCardId` is absent or empty)",
  key: { kind: "suffix", mode: "characters" },
  rows: [
    {
      match: "001",
      outcome: { steps: [] },
      description: "Stays `PROCESSING`",
    },
    {
      match: "002",
      outcome: { steps: [{ afterSeconds: 0, state: "CLOSED", stateReason: "ISSUER_REJECTED" }] },
      description: "The issuer rejects provisioning: `CLOSED` with `stateReason` `ISSUER_REJECTED`",
    },
    {
      match: "005",
      outcome: { steps: [{ afterSeconds: CARD_DELAYED_ACTIVATION_SECONDS, state: "ACTIVE" }] },
      description: `Activates after about ${CARD_DELAYED_ACTIVATION_SECONDS} seconds (\`ACTIVE\`)`,
    },
  ],
  other: {
    outcome: { steps: [{ afterSeconds: 0, state: "ACTIVE" }] },
    description: "Activates at once (`ACTIVE`)",
  },
  examples: ["card-emp-aary-001", "Customer:019542f5-b3e7-1d02-0000-000000000005", "card-42"],
  notes: [
    `Every sandbox card's \`last4\` is derived from the same identifier: \`${CARD_LAST4_PREFIX}\` followed by one digit per character of its last 3 characters. A digit stays itself; any other character becomes its Unicode code point modulo 10 (\`a\` is 97, so \`7\`); an identifier shorter than 3 characters is padded with \`0\` on the left. For example \`card-emp-aary-042\` gives \`${cardLast4("card-emp-aary-042")}\` and \`card-abc\` gives \`${cardLast4("card-abc")}\`.`,
  ],
};

export const CARD_FUNDING_SOURCE_TABLE: MagicTable<CardFundingSourceOutcome> = {
  id: "cardFundingSource",
  title: "Card funding source",
  description: "Decides whether an internal account can be bound to a card as a funding source.",
  appliesTo: "`POST /cards` and any binding of funding sources",
  field: "each internal account id in `fundingSources`",
  key: { kind: "suffix", mode: "characters" },
  rows: [
    {
      match: "002",
      outcome: {
        kind: "REJECT",
        status: 400,
        errorCode: "FUNDING_SOURCE_INELIGIBLE",
        message: "Sandbox: an internal account id ending in 002 fails the funding balance check.",
      },
      description: "400 `FUNDING_SOURCE_INELIGIBLE` (balance check fails)",
    },
    {
      match: "003",
      outcome: {
        kind: "REJECT",
        status: 400,
        errorCode: "FUNDING_SOURCE_INELIGIBLE",
        message: "Sandbox: an internal account id ending in 003 simulates a closed account.",
      },
      description: "400 `FUNDING_SOURCE_INELIGIBLE` (account closed)",
    },
  ],
  other: {
    outcome: { kind: "ELIGIBLE" },
    description: "The account is bound",
  },
  examples: ["InternalAccount:019542f5-b3e7-1d02-0000-000000000002"],
  notes: [
    "The sandbox never mints an internal account id ending in `002` or `003`, nor a customer id ending in a suffix of the card issuance table: ids are random, and about one in 2,000 would otherwise meet one of these outcomes by chance.",
  ],
};

export const CARD_AUTHORIZATION_TABLE: MagicTable<CardAuthorizationOutcome> = {
  id: "cardAuthorization",
  title: "Card authorization",
  description:
    "Decides a simulated card authorization. An approval still needs a funding source that covers the amount; otherwise the authorization is declined. A decline is answered by the simulation alone (`declineReason` and a `reason`): as in production, it makes no card transaction and sends no event. Times count from the authorization.",
  appliesTo:
    "`POST /sandbox/cards/{id}/simulate/authorization` and `/simulate/financial_authorization`; the decline rows also `/simulate/balance_inquiry`, `/simulate/credit_authorization`, `/simulate/financial_credit_authorization` and `/simulate/credit_authorization_advice`",
  field: "`merchant.descriptor`",
  key: { kind: "suffix", mode: "characters" },
  rows: [
    {
      match: "002",
      outcome: { kind: "DECLINE", declineReason: "INSUFFICIENT_FUNDS" },
      description: "Declined: `INSUFFICIENT_FUNDS` (the pull on the funding source fails)",
    },
    {
      match: "003",
      outcome: { kind: "DECLINE", declineReason: "CARD_PAUSED" },
      description: "Declined: `CARD_PAUSED`",
    },
    {
      match: "005",
      outcome: {
        kind: "APPROVE",
        pull: { afterSeconds: CARD_DELAYED_PULL_SECONDS, pullStatus: "CONFIRMED" },
      },
      description: `Approved; the pull stays pending about ${CARD_DELAYED_PULL_SECONDS} seconds, then confirms`,
    },
    {
      match: "006",
      outcome: {
        kind: "APPROVE",
        pull: { afterSeconds: 0, pullStatus: "FAILED", transactionStatus: "EXCEPTION" },
      },
      description: "Approved, but the pull reports failure: the transaction moves to `EXCEPTION`",
    },
  ],
  other: {
    outcome: { kind: "APPROVE", pull: { afterSeconds: 0, pullStatus: "CONFIRMED" } },
    description: "Approved (`AUTHORIZED`, one confirmed pull)",
  },
  examples: ["COFFEE SHOP 003", "BLUE BOTTLE COFFEE"],
  notes: [
    "A financial (single-message) authorization settles what it pulls at once: approved, it is `SETTLED`; with `005` it stays `SETTLED` while the pull is pending; with `006` the money goes back and it is `EXCEPTION`.",
    "A balance inquiry (an authorization of 0) and the credits to the card pull nothing: `002` and `003` decline them as above, and any other suffix, `005` and `006` included, approves them.",
  ],
};
