import { expect } from "vitest";
import { isCardDecline, type CardDecline, type Schemas } from "@payments-sandbox/client";
import { cardFundingSourceOutcome } from "@payments-sandbox/sandbox-rules";
import type { TestSandbox } from "./harness.js";
import { q } from "../src/db/query.js";
import { randomUUID } from "node:crypto";
import {
  balanceOf as balanceOfAccount,
  createAccount,
  fund as fundAccount,
  rememberAccount,
  withId,
} from "./money-helpers.js";

// Shared steps of the card tests, all through the public API (plus the
// database, read-only, for the outbox and the ledger).

export type Card = Schemas["Card"];
export type CardTransaction = Schemas["CardTransaction"];
export type { CardDecline };

let seq = 0;

/** Every card test's cardholder holds these; their accounts are opened with the customer. */
const CARDHOLDER_CURRENCIES = ["USD", "EUR"];

/**
 * A cardholder whose accounts can all fund cards. Ids are random, and the
 * sandbox's funding-source table refuses some endings (FACTS: 002, 003):
 * about one account in 500. A fixture that needs ordinary accounts takes
 * another customer, as a partner's set-up would.
 */
export async function newCustomer(sandbox: TestSandbox, lastName = "Hopper"): Promise<string> {
  seq += 1;
  const { data, error } = await sandbox.client.POST("/customers", {
    body: {
      customerType: "INDIVIDUAL",
      fullName: `Grace ${lastName}`,
      email: `grace${seq}@example.com`,
      currencies: CARDHOLDER_CURRENCIES,
    },
  });
  if (!data) throw new Error(`customer: ${JSON.stringify(error)}`);
  const customerId = withId(data).id;
  const accounts = await sandbox.client.GET("/customers/internal-accounts", {
    params: { query: { customerId } },
  });
  const eligible = (accounts.data?.data ?? []).every(
    (account) => cardFundingSourceOutcome(account.id).outcome.kind === "ELIGIBLE",
  );
  return eligible ? customerId : newCustomer(sandbox, lastName);
}

/** The cardholder's account in `currency`, funded with `fund`. */
export async function newAccount(
  sandbox: TestSandbox,
  customerId: string,
  fund = 0,
  currency = "USD",
): Promise<string> {
  return (await createAccount(sandbox.client, customerId, currency, fund)).id;
}

/**
 * A second account of the cardholder in the same currency. The API opens one
 * account per currency, but a card binds an ordered list of sources, as the
 * live contract describes; to exercise that order the fixture writes the
 * second account straight into the database, then funds it through the API.
 */
export async function secondAccount(
  sandbox: TestSandbox,
  customerId: string,
  fund = 0,
  currency = "USD",
): Promise<string> {
  const first = await newAccount(sandbox, customerId, 0, currency);
  const template = await sandbox.server.data.one(
    q.selectFrom("InternalAccount").selectAll().where("id", "=", first),
  );
  if (!template) throw new Error(`no account ${first}`);
  let id: string;
  do id = `InternalAccount:${randomUUID()}`;
  while (cardFundingSourceOutcome(id).outcome.kind !== "ELIGIBLE");
  await sandbox.server.data.execute(
    q.insertInto("InternalAccount").values({ ...template, id, balance: 0n }),
  );
  rememberAccount(id, { customerId, currency });
  if (fund > 0) await fundAccount(sandbox.client, id, fund);
  return id;
}

export async function balanceOf(sandbox: TestSandbox, accountId: string): Promise<number> {
  return balanceOfAccount(sandbox.client, accountId);
}

export async function createCard(
  sandbox: TestSandbox,
  body: Schemas["CardCreateRequest"],
): Promise<Card> {
  const { data, error, response } = await sandbox.client.POST("/cards", { body });
  if (!data) throw new Error(`card: ${response.status} ${JSON.stringify(error)}`);
  expect(response.status).toBe(201);
  expect(data.state).toBe("PROCESSING");
  return data;
}

export async function getCard(sandbox: TestSandbox, id: string): Promise<Card> {
  const { data } = await sandbox.client.GET("/cards/{id}", { params: { path: { id } } });
  return data!;
}

/** A KYC-approved cardholder with one funded USD account and an ACTIVE card. */
export async function activeCard(
  sandbox: TestSandbox,
  fund: number,
): Promise<{ card: Card; customerId: string; accountId: string }> {
  const customerId = await newCustomer(sandbox);
  const accountId = await newAccount(sandbox, customerId, fund);
  const created = await createCard(sandbox, {
    cardholderId: customerId,
    platformCardId: `card-${++seq}-x`,
    form: "VIRTUAL",
    fundingSources: [accountId],
  });
  const card = await getCard(sandbox, created.id);
  expect(card.state).toBe("ACTIVE");
  return { card, customerId, accountId };
}

export function purchase(amount: number, descriptor = "BLUE BOTTLE COFFEE SF") {
  return {
    amount,
    currency: { code: "USD" },
    merchant: { descriptor, mcc: "5814", country: "US" },
  };
}

export async function authorize(
  sandbox: TestSandbox,
  cardId: string,
  amount: number,
  descriptor?: string,
): Promise<CardTransaction> {
  const { data, error, response } = await sandbox.client.POST(
    "/sandbox/cards/{id}/simulate/authorization",
    { params: { path: { id: cardId } }, body: purchase(amount, descriptor) },
  );
  if (!data) throw new Error(`authorization: ${response.status} ${JSON.stringify(error)}`);
  expect(response.status).toBe(202);
  if (isCardDecline(data)) throw new Error(`authorization declined: ${JSON.stringify(data)}`);
  return data;
}

/**
 * A simulated authorization that the test expects declined: 202 with the
 * decline (the card, the reason in a code and in words, an issuer token), as
 * production's sandbox answers a declined simulation.
 */
export async function decline(
  sandbox: TestSandbox,
  cardId: string,
  amount: number,
  descriptor?: string,
): Promise<CardDecline> {
  const { data, error, response } = await sandbox.client.POST(
    "/sandbox/cards/{id}/simulate/authorization",
    { params: { path: { id: cardId } }, body: purchase(amount, descriptor) },
  );
  if (!data) throw new Error(`authorization: ${response.status} ${JSON.stringify(error)}`);
  expect(response.status).toBe(202);
  return expectDecline(data, cardId);
}

/** The answer is a decline of this card, whole: nothing else is in it. */
export function expectDecline(data: Schemas["SandboxCardAuthorizationResult"], cardId: string) {
  if (!isCardDecline(data)) throw new Error(`approved, not declined: ${JSON.stringify(data)}`);
  expect(Object.keys(data).sort()).toEqual([
    "cardId",
    "declineReason",
    "issuerTransactionToken",
    "reason",
  ]);
  expect(data.cardId).toBe(cardId);
  expect(data.issuerTransactionToken).toMatch(/^[0-9a-f-]{36}$/);
  expect(data.reason).not.toBe("");
  return data;
}

/**
 * The card transactions of a cardholder, as GET /transactions lists them:
 * a declined authorization adds none.
 */
export async function cardTransactionsOf(
  sandbox: TestSandbox,
  customerId: string,
): Promise<CardTransaction[]> {
  const { data } = await sandbox.client.GET("/transactions", {
    params: { query: { customerId, limit: 100 } },
  });
  return (data?.data ?? []).flatMap((t) => (t.type === "CARD" ? [t] : []));
}

export interface OutboxEvent {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

/** The webhook events recorded for one object, oldest first. */
export async function eventsFor(sandbox: TestSandbox, objectId: string): Promise<OutboxEvent[]> {
  const rows = await sandbox.server.data.all(
    q.selectFrom("WebhookEvent").selectAll().where("objectId", "=", objectId).orderBy("createdAt"),
  );
  return rows.map((r) => {
    const envelope = JSON.parse(r.payload) as OutboxEvent & { id: string };
    expect(envelope.id).toBe(r.id);
    return { type: envelope.type, timestamp: envelope.timestamp, data: envelope.data };
  });
}
