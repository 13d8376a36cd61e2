// Steps the card network tests share: sending a simulated network message that
// creates a transaction or changes one, with the ledger checked after each, and
// reading back the transaction, its ledger entries and its events. Each
// describe.each block starts its own sandbox, so the steps read it through a
// getter rather than holding one.
import { expect } from "vitest";
import { q } from "../../src/db/query.js";
import {
  eventsFor,
  expectDecline,
  type CardDecline,
  type CardTransaction,
  type purchase,
} from "../card-fixtures.js";
import type { TestSandbox } from "../harness.js";
import { expectLedgersBalanced } from "../money-helpers.js";

export type CreatingAction =
  | "balance_inquiry"
  | "credit_authorization"
  | "financial_authorization"
  | "financial_credit_authorization"
  | "credit_authorization_advice";
export type ChangingAction = "authorization_advice" | "return_reversal" | "clearing" | "return";

export function cardNetworkSteps(current: () => TestSandbox) {
  /** The ledger entries a transaction caused, oldest first: [kind, signed amount]. */
  async function movesOf(txnId: string) {
    const entries = await current().server.data.all(
      q.selectFrom("LedgerEntry").selectAll().where("reference", "=", txnId).orderBy("createdAt"),
    );
    return entries.map((e) => [e.kind, Number(e.amount)]);
  }

  async function create(
    action: CreatingAction,
    cardId: string,
    body: Record<string, unknown>,
    client = current().client,
  ) {
    return client.POST(
      `/sandbox/cards/{id}/simulate/${action}` as "/sandbox/cards/{id}/simulate/credit_authorization",
      {
        params: { path: { id: cardId } },
        body: body as ReturnType<typeof purchase>,
      },
    );
  }

  /** A simulation that creates a transaction; 202, and every ledger holds. */
  async function created(
    action: CreatingAction,
    cardId: string,
    body: Record<string, unknown>,
  ): Promise<CardTransaction> {
    const { data, error, response } = await create(action, cardId, body);
    if (!data) throw new Error(`${action}: ${response.status} ${JSON.stringify(error)}`);
    expect(response.status).toBe(202);
    await expectLedgersBalanced(current().server.data);
    if ("declineReason" in data) throw new Error(`${action} declined: ${JSON.stringify(data)}`);
    return data;
  }

  /**
   * A simulation the test expects declined: 202 with the decline alone. No
   * card transaction is made (nor, so, any CARD_TRANSACTION event), and every
   * ledger holds.
   */
  async function declined(
    action: CreatingAction,
    cardId: string,
    body: Record<string, unknown>,
  ): Promise<CardDecline> {
    const { data, error, response } = await create(action, cardId, body);
    if (!data) throw new Error(`${action}: ${response.status} ${JSON.stringify(error)}`);
    expect(response.status).toBe(202);
    await expectLedgersBalanced(current().server.data);
    return expectDecline(data, cardId);
  }

  async function change(
    action: ChangingAction,
    cardId: string,
    body: { cardTransactionId: string; amount?: number },
    client = current().client,
  ) {
    return client.POST(
      `/sandbox/cards/{id}/simulate/${action}` as "/sandbox/cards/{id}/simulate/clearing",
      {
        params: { path: { id: cardId } },
        body: body as { cardTransactionId: string; amount: number },
      },
    );
  }

  async function changed(
    action: ChangingAction,
    cardId: string,
    body: { cardTransactionId: string; amount?: number },
  ): Promise<CardTransaction> {
    const { data, error, response } = await change(action, cardId, body);
    if (!data) throw new Error(`${action}: ${response.status} ${JSON.stringify(error)}`);
    expect(response.status).toBe(202);
    await expectLedgersBalanced(current().server.data);
    return data;
  }

  async function getTransaction(id: string) {
    const { data } = await current().client.GET("/transactions/{transactionId}", {
      params: { path: { transactionId: id } },
    });
    if (data?.type !== "CARD") throw new Error(`${id} is not a card transaction`);
    return data;
  }

  /** The event types of a transaction, and that the last one carries the parent as read. */
  async function expectEvents(txn: CardTransaction, types: string[]) {
    const events = await eventsFor(current(), txn.id);
    expect(events.map((e) => e.type)).toEqual(types);
    expect(events.at(-1)!.data).toEqual(await getTransaction(txn.id));
  }

  const inquiry = (descriptor = "SHELL OIL 12345678") => ({
    merchant: { descriptor, mcc: "5541", country: "US" },
  });

  return {
    movesOf,
    create,
    created,
    declined,
    change,
    changed,
    getTransaction,
    expectEvents,
    inquiry,
  };
}
