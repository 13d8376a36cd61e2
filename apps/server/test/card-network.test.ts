import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { q } from "../src/db/query.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { expectLedgersBalanced } from "./money-helpers.js";
import {
  activeCard,
  authorize,
  balanceOf,
  cardTransactionsOf,
  createCard,
  eventsFor,
  expectDecline,
  newAccount,
  newCustomer,
  purchase,
  type CardDecline,
  type CardTransaction,
} from "./card-fixtures.js";

// The card network's other messages (issue 16): balance inquiry, credit
// authorization and its advice, financial (single-message) authorization and
// credit, authorization advice, and return reversal. Each is checked as a
// partner would: the transaction it answers, the money on the funding source
// (whose ledger must explain its balance after every simulation), and the
// CARD_TRANSACTION.* events, the last of which carries the parent as read.

const zero = { count: 0, totalAmount: 0 };
const usd = (amount: number) => ({ amount, currency: { code: "USD" } });

type CreatingAction =
  | "balance_inquiry"
  | "credit_authorization"
  | "financial_authorization"
  | "financial_credit_authorization"
  | "credit_authorization_advice";
type ChangingAction = "authorization_advice" | "return_reversal" | "clearing" | "return";

describe.each(databases)("card network simulations on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  /** The ledger entries a transaction caused, oldest first: [kind, signed amount]. */
  async function movesOf(txnId: string) {
    const entries = await sandbox.server.data.all(
      q.selectFrom("LedgerEntry").selectAll().where("reference", "=", txnId).orderBy("createdAt"),
    );
    return entries.map((e) => [e.kind, Number(e.amount)]);
  }

  async function create(
    action: CreatingAction,
    cardId: string,
    body: Record<string, unknown>,
    client = sandbox.client,
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
    await expectLedgersBalanced(sandbox.server.data);
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
    await expectLedgersBalanced(sandbox.server.data);
    return expectDecline(data, cardId);
  }

  async function change(
    action: ChangingAction,
    cardId: string,
    body: { cardTransactionId: string; amount?: number },
    client = sandbox.client,
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
    await expectLedgersBalanced(sandbox.server.data);
    return data;
  }

  async function getTransaction(id: string) {
    const { data } = await sandbox.client.GET("/transactions/{transactionId}", {
      params: { path: { transactionId: id } },
    });
    if (data?.type !== "CARD") throw new Error(`${id} is not a card transaction`);
    return data;
  }

  /** The event types of a transaction, and that the last one carries the parent as read. */
  async function expectEvents(txn: CardTransaction, types: string[]) {
    const events = await eventsFor(sandbox, txn.id);
    expect(events.map((e) => e.type)).toEqual(types);
    expect(events.at(-1)!.data).toEqual(await getTransaction(txn.id));
  }

  const inquiry = (descriptor = "SHELL OIL 12345678") => ({
    merchant: { descriptor, mcc: "5541", country: "US" },
  });

  describe("balance inquiry", () => {
    it("is an authorization of 0: AUTHORIZED, nothing held, pulled or moved", async () => {
      const { card, accountId, customerId } = await activeCard(sandbox, 10_000);
      const txn = await created("balance_inquiry", card.id, inquiry());
      expect(txn).toMatchObject({
        type: "CARD",
        cardId: card.id,
        customerId,
        accountId,
        direction: "DEBIT",
        status: "AUTHORIZED",
        merchant: { descriptor: "SHELL OIL 12345678", mcc: "5541", country: "US" },
        authorizedAmount: usd(0),
        settledAmount: usd(0),
        refundedAmount: usd(0),
        pullSummary: { count: 0, totalAmount: 0, pendingCount: 0 },
        settlementSummary: zero,
        refundSummary: zero,
      });
      expect(txn).not.toHaveProperty("declineReason");
      expect(await balanceOf(sandbox, accountId)).toBe(10_000);
      expect(await movesOf(txn.id)).toEqual([]);
      await expectEvents(txn, ["CARD_TRANSACTION.AUTHORIZED"]);
      // The first test of a fresh sandbox also compiles each operation's checks on first use.
    }, 90_000);

    it("declines on suffixes 002 and 003 and on a frozen card; 005 and 006 approve", async () => {
      const { card, accountId, customerId } = await activeCard(sandbox, 10_000);
      const a = await declined("balance_inquiry", card.id, inquiry("FUEL 002"));
      expect(a.declineReason).toBe("INSUFFICIENT_FUNDS");
      const b = await declined("balance_inquiry", card.id, inquiry("FUEL 003"));
      expect(b.declineReason).toBe("CARD_PAUSED");
      expect(await cardTransactionsOf(sandbox, customerId)).toEqual([]);
      for (const suffix of ["005", "006"]) {
        const approved = await created("balance_inquiry", card.id, inquiry(`FUEL ${suffix}`));
        expect(approved).toMatchObject({
          status: "AUTHORIZED",
          pullSummary: { count: 0, totalAmount: 0, pendingCount: 0 },
        });
      }
      await sandbox.client.PATCH("/cards/{id}", {
        params: { path: { id: card.id } },
        body: { state: "FROZEN" },
      });
      const frozen = await declined("balance_inquiry", card.id, inquiry());
      expect(frozen).toMatchObject({ declineReason: "CARD_PAUSED", reason: "The card is FROZEN" });
      expect(await balanceOf(sandbox, accountId)).toBe(10_000);
      // The two approved inquiries, and nothing for the three declines.
      expect(await cardTransactionsOf(sandbox, customerId)).toHaveLength(2);
    });

    it("is 404 REFERENCE_NOT_FOUND for an unknown card or another platform's", async () => {
      const { card } = await activeCard(sandbox, 0);
      const unknown = await create(
        "balance_inquiry",
        "Card:00000000-0000-4000-8000-000000000000",
        inquiry(),
      );
      expect(unknown.response.status).toBe(404);
      expect(unknown.error).toMatchObject({ code: "REFERENCE_NOT_FOUND" });
      const other = await sandbox.otherPlatformClient();
      const foreign = await create("balance_inquiry", card.id, inquiry(), other);
      expect(foreign.response.status).toBe(404);
      expect(foreign.error).toMatchObject({ code: "REFERENCE_NOT_FOUND" });
      expect(await eventsFor(sandbox, card.id)).not.toContainEqual(
        expect.objectContaining({ type: "CARD_TRANSACTION.AUTHORIZED" }),
      );
    });
  });

  describe("financial authorization", () => {
    it("pulls and settles in one message: SETTLED, one pull, one settlement", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await created(
        "financial_authorization",
        card.id,
        purchase(8000, "ATM WITHDRAWAL 24TH ST"),
      );
      expect(txn).toMatchObject({
        direction: "DEBIT",
        status: "SETTLED",
        authorizedAmount: usd(8000),
        settledAmount: usd(8000),
        pullSummary: { count: 1, totalAmount: 8000, pendingCount: 0 },
        settlementSummary: { count: 1, totalAmount: 8000 },
        refundSummary: zero,
      });
      expect(await balanceOf(sandbox, accountId)).toBe(2000);
      expect(await movesOf(txn.id)).toEqual([["CARD_FINANCIAL", -8000]]);
      await expectEvents(txn, ["CARD_TRANSACTION.SETTLED"]);
      // Settled at once: nothing left to clear, but it can be returned.
      const clearing = await change("clearing", card.id, {
        cardTransactionId: txn.id,
        amount: 8000,
      });
      expect(clearing.response.status).toBe(409);
      expect(clearing.error).toMatchObject({ code: "INVALID_STATE_TRANSITION" });
      const refunded = await changed("return", card.id, {
        cardTransactionId: txn.id,
        amount: 8000,
      });
      expect(refunded.status).toBe("REFUNDED");
      expect(await balanceOf(sandbox, accountId)).toBe(10_000);
    });

    it("declines what no funding source covers, above the card's limit, and on suffixes 002 and 003", async () => {
      const customerId = await newCustomer(sandbox);
      const accountId = await newAccount(sandbox, customerId, 1000);
      const card = await createCard(sandbox, {
        cardholderId: customerId,
        form: "VIRTUAL",
        fundingSources: [accountId],
        maxSpendPerTransaction: 900,
      });
      const cases: [number, string, string][] = [
        [1000, "ATM 24TH ST", "MAX_SPEND_EXCEEDED"],
        [500, "ATM 24TH ST 002", "INSUFFICIENT_FUNDS"],
        [500, "ATM 24TH ST 003", "CARD_PAUSED"],
      ];
      for (const [amount, descriptor, reason] of cases) {
        const answer = await declined(
          "financial_authorization",
          card.id,
          purchase(amount, descriptor),
        );
        expect(answer.declineReason).toBe(reason);
      }
      await sandbox.client.PATCH("/cards/{id}", {
        params: { path: { id: card.id } },
        body: { maxSpendPerTransaction: null },
      });
      const short = await declined("financial_authorization", card.id, purchase(1001, "ATM"));
      expect(short.declineReason).toBe("INSUFFICIENT_FUNDS");
      expect(await balanceOf(sandbox, accountId)).toBe(1000);
      expect(await cardTransactionsOf(sandbox, customerId)).toEqual([]);
    });

    it("suffix 005: SETTLED with the pull pending about 30 seconds, then confirmed", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await created("financial_authorization", card.id, purchase(3000, "ATM 005"));
      expect(txn).toMatchObject({
        status: "SETTLED",
        pullSummary: { count: 1, totalAmount: 3000, pendingCount: 1 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(7000);
      await sandbox.client.POST("/sandbox/clock/advance", { body: { seconds: 31 } });
      expect(await getTransaction(txn.id)).toMatchObject({
        status: "SETTLED",
        pullSummary: { count: 1, totalAmount: 3000, pendingCount: 0 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(7000);
      await expectLedgersBalanced(sandbox.server.data);
      await expectEvents(txn, ["CARD_TRANSACTION.SETTLED", "CARD_TRANSACTION.SETTLED"]);
    });

    it("suffix 006: the pull fails, the money goes back, EXCEPTION with the settlement standing", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await created("financial_authorization", card.id, purchase(3000, "ATM 006"));
      expect(txn).toMatchObject({
        status: "EXCEPTION",
        settledAmount: usd(3000),
        pullSummary: { count: 1, totalAmount: 0, pendingCount: 0 },
        settlementSummary: { count: 1, totalAmount: 3000 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(10_000);
      expect(await movesOf(txn.id)).toEqual([
        ["CARD_FINANCIAL", -3000],
        ["CARD_PULL_FAILED", 3000],
      ]);
      const events = await eventsFor(sandbox, txn.id);
      expect(events.map((e) => e.type).sort()).toEqual([
        "CARD_TRANSACTION.EXCEPTION",
        "CARD_TRANSACTION.SETTLED",
      ]);
      expect(events.find((e) => e.type === "CARD_TRANSACTION.EXCEPTION")!.data).toEqual(
        await getTransaction(txn.id),
      );
    });

    it("refuses another currency with 400 INVALID_CURRENCY", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const euros = await create("financial_authorization", card.id, {
        ...purchase(100),
        currency: { code: "EUR" },
      });
      expect(euros.response.status).toBe(400);
      expect(euros.error).toMatchObject({ code: "INVALID_CURRENCY" });
      expect(await balanceOf(sandbox, accountId)).toBe(10_000);
    });
  });

  describe("credits to the card", () => {
    it("a financial credit posts at once: CREDIT, SETTLED, the funding source credited", async () => {
      const { card, accountId } = await activeCard(sandbox, 1000);
      const txn = await created(
        "financial_credit_authorization",
        card.id,
        purchase(4000, "ACME PAYOUTS"),
      );
      expect(txn).toMatchObject({
        direction: "CREDIT",
        status: "SETTLED",
        accountId,
        authorizedAmount: usd(4000),
        settledAmount: usd(4000),
        pullSummary: { count: 0, totalAmount: 0, pendingCount: 0 },
        settlementSummary: { count: 1, totalAmount: 4000 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(5000);
      expect(await movesOf(txn.id)).toEqual([["CARD_CREDIT", 4000]]);
      await expectEvents(txn, ["CARD_TRANSACTION.SETTLED"]);
      // Listed with the transactions that bring money into the account, not those that take it.
      const listed = async (query: {
        receiverAccountIdentifier?: string;
        senderAccountIdentifier?: string;
      }) =>
        (await sandbox.client.GET("/transactions", { params: { query } })).data!.data.map(
          (t) => t.id,
        );
      expect(await listed({ receiverAccountIdentifier: accountId })).toContain(txn.id);
      expect(await listed({ senderAccountIdentifier: accountId })).not.toContain(txn.id);
      // A credit is not a purchase: it cannot be returned.
      const returned = await change("return", card.id, { cardTransactionId: txn.id, amount: 100 });
      expect(returned.response.status).toBe(409);
      expect(returned.error).toMatchObject({ code: "INVALID_STATE_TRANSITION" });
    });

    it.each(["credit_authorization", "credit_authorization_advice"] as const)(
      "%s: AUTHORIZED with nothing moved; its clearing posts the credit",
      async (action) => {
        const { card, accountId } = await activeCard(sandbox, 1000);
        const txn = await created(action, card.id, purchase(2500, "ACME MARKETPLACE"));
        expect(txn).toMatchObject({
          direction: "CREDIT",
          status: "AUTHORIZED",
          authorizedAmount: usd(2500),
          settledAmount: usd(0),
          pullSummary: { count: 0, totalAmount: 0, pendingCount: 0 },
          settlementSummary: zero,
        });
        expect(await balanceOf(sandbox, accountId)).toBe(1000);
        expect(await movesOf(txn.id)).toEqual([]);
        // Increments pull money, which a credit does not.
        const increment = await sandbox.client.POST("/sandbox/cards/{id}/simulate/increment", {
          params: { path: { id: card.id } },
          body: { cardTransactionId: txn.id, amount: 100 },
        });
        expect(increment.response.status).toBe(409);
        const settled = await changed("clearing", card.id, {
          cardTransactionId: txn.id,
          amount: 2500,
        });
        expect(settled).toMatchObject({
          direction: "CREDIT",
          status: "SETTLED",
          settledAmount: usd(2500),
          settlementSummary: { count: 1, totalAmount: 2500 },
          pullSummary: { count: 0, totalAmount: 0, pendingCount: 0 },
        });
        expect(await balanceOf(sandbox, accountId)).toBe(3500);
        expect(await movesOf(txn.id)).toEqual([["CARD_CREDIT", 2500]]);
        await expectEvents(txn, ["CARD_TRANSACTION.AUTHORIZED", "CARD_TRANSACTION.SETTLED"]);
      },
    );

    it("a credit authorization cleared for less is PARTIALLY_SETTLED; for 0 it expires, SETTLED with nothing posted", async () => {
      const { card, accountId } = await activeCard(sandbox, 0);
      const a = await created("credit_authorization", card.id, purchase(2500, "ACME"));
      const partial = await changed("clearing", card.id, { cardTransactionId: a.id, amount: 1000 });
      expect(partial).toMatchObject({ status: "PARTIALLY_SETTLED", settledAmount: usd(1000) });
      const b = await created("credit_authorization", card.id, purchase(2500, "ACME"));
      const expired = await changed("clearing", card.id, { cardTransactionId: b.id, amount: 0 });
      expect(expired).toMatchObject({
        status: "SETTLED",
        authorizedAmount: usd(2500),
        settledAmount: usd(0),
        settlementSummary: zero,
      });
      expect(await balanceOf(sandbox, accountId)).toBe(1000);
      expect(await movesOf(b.id)).toEqual([]);
      await expectEvents(b, ["CARD_TRANSACTION.AUTHORIZED", "CARD_TRANSACTION.SETTLED"]);
    });

    it.each([
      "credit_authorization",
      "credit_authorization_advice",
      "financial_credit_authorization",
    ] as const)(
      "%s declines on 002, 003 and a frozen card; 005, 006 and the spend limit do not apply",
      async (action) => {
        const customerId = await newCustomer(sandbox);
        const accountId = await newAccount(sandbox, customerId, 0);
        const card = await createCard(sandbox, {
          cardholderId: customerId,
          form: "VIRTUAL",
          fundingSources: [accountId],
          maxSpendPerTransaction: 100,
        });
        const a = await declined(action, card.id, purchase(500, "REFUNDS 002"));
        expect(a.declineReason).toBe("INSUFFICIENT_FUNDS");
        const b = await declined(action, card.id, purchase(500, "REFUNDS 003"));
        expect(b.declineReason).toBe("CARD_PAUSED");
        expect(await balanceOf(sandbox, accountId)).toBe(0);
        expect(await cardTransactionsOf(sandbox, customerId)).toEqual([]);
        const posts = action === "financial_credit_authorization";
        for (const suffix of ["005", "006"]) {
          const ok = await created(action, card.id, purchase(500, `REFUNDS ${suffix}`));
          expect(ok).toMatchObject({
            status: posts ? "SETTLED" : "AUTHORIZED",
            authorizedAmount: usd(500),
            pullSummary: { count: 0, totalAmount: 0, pendingCount: 0 },
          });
        }
        expect(await balanceOf(sandbox, accountId)).toBe(posts ? 1000 : 0);
        await sandbox.client.PATCH("/cards/{id}", {
          params: { path: { id: card.id } },
          body: { state: "FROZEN" },
        });
        const frozen = await declined(action, card.id, purchase(500, "REFUNDS"));
        expect(frozen.declineReason).toBe("CARD_PAUSED");
        const euros = await create(action, card.id, {
          ...purchase(500),
          currency: { code: "EUR" },
        });
        expect(euros.response.status).toBe(400);
        expect(euros.error).toMatchObject({ code: "INVALID_CURRENCY" });
        const other = await sandbox.otherPlatformClient();
        const foreign = await create(action, card.id, purchase(500), other);
        expect(foreign.response.status).toBe(404);
        expect(foreign.error).toMatchObject({ code: "REFERENCE_NOT_FOUND" });
        expect(await balanceOf(sandbox, accountId)).toBe(posts ? 1000 : 0);
      },
    );
  });

  describe("authorization advice", () => {
    it("re-sizes up (a pull) and down (a release); clearing settles the new total", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      const up = await changed("authorization_advice", card.id, {
        cardTransactionId: txn.id,
        amount: 3000,
      });
      expect(up).toMatchObject({
        status: "AUTHORIZED",
        authorizedAmount: usd(3000),
        pullSummary: { count: 2, totalAmount: 3000, pendingCount: 0 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(7000);
      const down = await changed("authorization_advice", card.id, {
        cardTransactionId: txn.id,
        amount: 1200,
      });
      expect(down).toMatchObject({
        status: "AUTHORIZED",
        authorizedAmount: usd(1200),
        pullSummary: { count: 2, totalAmount: 3000, pendingCount: 0 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(8800);
      const same = await changed("authorization_advice", card.id, {
        cardTransactionId: txn.id,
        amount: 1200,
      });
      expect(same.authorizedAmount).toEqual(down.authorizedAmount);
      const settled = await changed("clearing", card.id, {
        cardTransactionId: txn.id,
        amount: 1200,
      });
      expect(settled).toMatchObject({ status: "SETTLED", settledAmount: usd(1200) });
      expect(await balanceOf(sandbox, accountId)).toBe(8800);
      expect(await movesOf(txn.id)).toEqual([
        ["CARD_AUTHORIZATION", -2500],
        ["CARD_PULL", -500],
        ["CARD_RELEASE", 1800],
      ]);
      await expectEvents(txn, [
        "CARD_TRANSACTION.AUTHORIZED",
        "CARD_TRANSACTION.AUTHORIZED",
        "CARD_TRANSACTION.AUTHORIZED",
        "CARD_TRANSACTION.AUTHORIZED",
        "CARD_TRANSACTION.SETTLED",
      ]);
    });

    it("re-opens a partially settled transaction, which a later clearing settles", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      await changed("clearing", card.id, { cardTransactionId: txn.id, amount: 2000 });
      expect(await balanceOf(sandbox, accountId)).toBe(8000);
      const below = await change("authorization_advice", card.id, {
        cardTransactionId: txn.id,
        amount: 1999,
      });
      expect(below.response.status).toBe(400);
      expect(below.error).toMatchObject({ code: "INVALID_AMOUNT" });
      const reopened = await changed("authorization_advice", card.id, {
        cardTransactionId: txn.id,
        amount: 3000,
      });
      expect(reopened).toMatchObject({
        status: "PARTIALLY_SETTLED",
        authorizedAmount: usd(3000),
        settledAmount: usd(2000),
        pullSummary: { count: 2, totalAmount: 3500, pendingCount: 0 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(7000);
      const settled = await changed("clearing", card.id, {
        cardTransactionId: txn.id,
        amount: 1000,
      });
      expect(settled).toMatchObject({
        status: "SETTLED",
        settledAmount: usd(3000),
        settlementSummary: { count: 2, totalAmount: 3000 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(7000);
      await expectEvents(txn, [
        "CARD_TRANSACTION.AUTHORIZED",
        "CARD_TRANSACTION.PARTIALLY_SETTLED",
        "CARD_TRANSACTION.PARTIALLY_SETTLED",
        "CARD_TRANSACTION.SETTLED",
      ]);
    });

    it("a pull the funding source cannot cover fails: EXCEPTION, and the hold can still be cleared", async () => {
      const { card, accountId } = await activeCard(sandbox, 3000);
      const txn = await authorize(sandbox, card.id, 2500);
      const failed = await changed("authorization_advice", card.id, {
        cardTransactionId: txn.id,
        amount: 4000,
      });
      expect(failed).toMatchObject({
        status: "EXCEPTION",
        authorizedAmount: usd(4000),
        pullSummary: { count: 2, totalAmount: 2500, pendingCount: 0 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(500);
      const cleared = await changed("clearing", card.id, {
        cardTransactionId: txn.id,
        amount: 2500,
      });
      expect(cleared).toMatchObject({ status: "EXCEPTION", settledAmount: usd(2500) });
      expect(await balanceOf(sandbox, accountId)).toBe(500);
      await expectEvents(txn, [
        "CARD_TRANSACTION.AUTHORIZED",
        "CARD_TRANSACTION.EXCEPTION",
        "CARD_TRANSACTION.EXCEPTION",
      ]);
    });

    it("re-sizes a credit authorization without moving money", async () => {
      const { card, accountId } = await activeCard(sandbox, 0);
      const txn = await created("credit_authorization", card.id, purchase(2500, "ACME"));
      const resized = await changed("authorization_advice", card.id, {
        cardTransactionId: txn.id,
        amount: 4000,
      });
      expect(resized).toMatchObject({
        direction: "CREDIT",
        status: "AUTHORIZED",
        authorizedAmount: usd(4000),
      });
      expect(await balanceOf(sandbox, accountId)).toBe(0);
      expect(await movesOf(txn.id)).toEqual([]);
    });

    it("refuses a closed transaction (409), another card's or platform's (404)", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const other = await activeCard(sandbox, 0);
      const txn = await authorize(sandbox, card.id, 2500);
      const wrongCard = await change("authorization_advice", other.card.id, {
        cardTransactionId: txn.id,
        amount: 100,
      });
      expect(wrongCard.response.status).toBe(404);
      expect(wrongCard.error).toMatchObject({ code: "TRANSACTION_NOT_FOUND" });
      const foreign = await change(
        "authorization_advice",
        card.id,
        { cardTransactionId: txn.id, amount: 100 },
        await sandbox.otherPlatformClient(),
      );
      expect(foreign.response.status).toBe(404);
      await changed("clearing", card.id, { cardTransactionId: txn.id, amount: 2500 });
      const late = await change("authorization_advice", card.id, {
        cardTransactionId: txn.id,
        amount: 3000,
      });
      expect(late.response.status).toBe(409);
      expect(late.error).toMatchObject({ code: "INVALID_STATE_TRANSITION" });
      expect(await balanceOf(sandbox, accountId)).toBe(7500);
    });
  });

  describe("return reversal", () => {
    it("takes the latest return back: pulled again, settled again, refunds rolled back", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      await changed("clearing", card.id, { cardTransactionId: txn.id, amount: 2750 });
      await changed("return", card.id, { cardTransactionId: txn.id, amount: 750 });
      await sandbox.client.POST("/sandbox/clock/advance", { body: { seconds: 1 } });
      await changed("return", card.id, { cardTransactionId: txn.id, amount: 2000 });
      expect(await balanceOf(sandbox, accountId)).toBe(10_000);
      const reversed = await changed("return_reversal", card.id, { cardTransactionId: txn.id });
      expect(reversed).toMatchObject({
        status: "SETTLED",
        settledAmount: usd(2750),
        refundedAmount: usd(750),
        refundSummary: { count: 1, totalAmount: 750 },
        pullSummary: { count: 3, totalAmount: 4750, pendingCount: 0 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(8000);
      expect((await movesOf(txn.id)).at(-1)).toEqual(["CARD_RETURN_REVERSAL", -2000]);
      // Only a REFUNDED transaction has a return to reverse.
      const again = await change("return_reversal", card.id, { cardTransactionId: txn.id });
      expect(again.response.status).toBe(409);
      expect(again.error).toMatchObject({ code: "INVALID_STATE_TRANSITION" });
      // What is refundable again can be returned again.
      const refunded = await changed("return", card.id, {
        cardTransactionId: txn.id,
        amount: 2000,
      });
      expect(refunded).toMatchObject({
        status: "REFUNDED",
        refundSummary: { count: 2, totalAmount: 2750 },
      });
      await expectEvents(txn, [
        "CARD_TRANSACTION.AUTHORIZED",
        "CARD_TRANSACTION.SETTLED",
        "CARD_TRANSACTION.SETTLED",
        "CARD_TRANSACTION.REFUNDED",
        "CARD_TRANSACTION.SETTLED",
        "CARD_TRANSACTION.REFUNDED",
      ]);
    });

    it("a partially settled purchase goes back to PARTIALLY_SETTLED", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      await changed("clearing", card.id, { cardTransactionId: txn.id, amount: 2000 });
      await changed("return", card.id, { cardTransactionId: txn.id, amount: 2000 });
      const reversed = await changed("return_reversal", card.id, { cardTransactionId: txn.id });
      expect(reversed).toMatchObject({
        status: "PARTIALLY_SETTLED",
        refundedAmount: usd(0),
        refundSummary: zero,
      });
      expect(await balanceOf(sandbox, accountId)).toBe(8000);
      await expectEvents(txn, [
        "CARD_TRANSACTION.AUTHORIZED",
        "CARD_TRANSACTION.PARTIALLY_SETTLED",
        "CARD_TRANSACTION.REFUNDED",
        "CARD_TRANSACTION.PARTIALLY_SETTLED",
      ]);
    });

    it("a funding source that cannot cover it: the pull fails, EXCEPTION, the return still reversed", async () => {
      const { card, accountId } = await activeCard(sandbox, 2500);
      const txn = await authorize(sandbox, card.id, 2500);
      await changed("clearing", card.id, { cardTransactionId: txn.id, amount: 2500 });
      await changed("return", card.id, { cardTransactionId: txn.id, amount: 2500 });
      // The refunded money is spent elsewhere.
      await authorize(sandbox, card.id, 2000);
      const failed = await changed("return_reversal", card.id, { cardTransactionId: txn.id });
      expect(failed).toMatchObject({
        status: "EXCEPTION",
        refundedAmount: usd(0),
        pullSummary: { count: 2, totalAmount: 2500, pendingCount: 0 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(500);
      await expectEvents(txn, [
        "CARD_TRANSACTION.AUTHORIZED",
        "CARD_TRANSACTION.SETTLED",
        "CARD_TRANSACTION.REFUNDED",
        "CARD_TRANSACTION.EXCEPTION",
      ]);
    });

    it("refuses what is not REFUNDED (409), another card's or platform's (404)", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      const early = await change("return_reversal", card.id, { cardTransactionId: txn.id });
      expect(early.response.status).toBe(409);
      expect(early.error).toMatchObject({ code: "INVALID_STATE_TRANSITION" });
      await changed("clearing", card.id, { cardTransactionId: txn.id, amount: 2500 });
      await changed("return", card.id, { cardTransactionId: txn.id, amount: 2500 });
      const other = await activeCard(sandbox, 0);
      const wrongCard = await change("return_reversal", other.card.id, {
        cardTransactionId: txn.id,
      });
      expect(wrongCard.response.status).toBe(404);
      expect(wrongCard.error).toMatchObject({ code: "TRANSACTION_NOT_FOUND" });
      const foreign = await change(
        "return_reversal",
        card.id,
        { cardTransactionId: txn.id },
        await sandbox.otherPlatformClient(),
      );
      expect(foreign.response.status).toBe(404);
      expect(await balanceOf(sandbox, accountId)).toBe(10_000);
      expect((await getTransaction(txn.id)).status).toBe("REFUNDED");
    });
  });
});
