// Steps the card transaction tests share: the network's clearing, return,
// increment and reversal of a transaction, and reading back a transaction and
// its events. Each describe.each block starts its own sandbox, so the steps
// read it through a getter rather than holding one.
import { expect } from "vitest";
import { q } from "../../src/db/query.js";
import { eventsFor, type CardTransaction } from "../card-fixtures.js";
import type { TestSandbox } from "../harness.js";

export function cardTransactionSteps(current: () => TestSandbox) {
  const simulate = (
    action: "clearing" | "return" | "increment" | "reversal",
    cardId: string,
    body: { cardTransactionId: string; amount?: number },
  ) =>
    current().client.POST(
      `/sandbox/cards/{id}/simulate/${action}` as "/sandbox/cards/{id}/simulate/clearing",
      {
        params: { path: { id: cardId } },
        body: body as { cardTransactionId: string; amount: number },
      },
    );

  async function ok(
    action: "clearing" | "return" | "increment" | "reversal",
    cardId: string,
    body: { cardTransactionId: string; amount?: number },
  ): Promise<CardTransaction> {
    const { data, error, response } = await simulate(action, cardId, body);
    if (!data) throw new Error(`${action}: ${response.status} ${JSON.stringify(error)}`);
    // The network's events are accepted (202); the sandbox-only extras answer 200.
    expect(response.status).toBe(action === "clearing" || action === "return" ? 202 : 200);
    return data;
  }

  /** Every card transaction event about the card (a decline has none). */
  async function eventsOfCardTransactions(cardId: string) {
    const rows = await current().server.data.all(
      q.selectFrom("WebhookEvent").select("payload").where("type", "like", "CARD_TRANSACTION.%"),
    );
    return rows.filter(
      (r) => (JSON.parse(r.payload) as { data: { cardId?: string } }).data.cardId === cardId,
    );
  }

  async function getTransaction(id: string) {
    const { data } = await current().client.GET("/transactions/{transactionId}", {
      params: { path: { transactionId: id } },
    });
    if (data?.type !== "CARD") throw new Error(`${id} is not a card transaction`);
    return data;
  }

  /** The event types of a transaction, and that the last one carries it whole. */
  async function expectEvents(txn: CardTransaction, types: string[]) {
    const events = await eventsFor(current(), txn.id);
    expect(events.map((e) => e.type)).toEqual(types);
    expect(events.at(-1)!.data).toEqual(await getTransaction(txn.id));
  }

  return { simulate, ok, eventsOfCardTransactions, getTransaction, expectEvents };
}
