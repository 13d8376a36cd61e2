import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { expectLedgersBalanced } from "./money-helpers.js";
import {
  activeCard,
  balanceOf,
  cardTransactionsOf,
  createCard,
  eventsFor,
  newAccount,
  newCustomer,
  purchase,
} from "./card-fixtures.js";
import { cardNetworkSteps } from "./support/card-network.js";

// The card network's other messages (issue 16): balance inquiry, credit
// authorization and its advice, and financial (single-message) authorization
// and credit; authorization advice and return reversal are in
// card-network-changes.test.ts. Each is checked as a partner would: the
// transaction it answers, the money on the funding source (whose ledger must
// explain its balance after every simulation), and the CARD_TRANSACTION.*
// events, the last of which carries the parent as read.

const zero = { count: 0, totalAmount: 0 };
const usd = (amount: number) => ({ amount, currency: { code: "USD" } });

describe.each(databases)("card network simulations on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const {
    movesOf,
    create,
    created,
    declined,
    change,
    changed,
    getTransaction,
    expectEvents,
    inquiry,
  } = cardNetworkSteps(() => sandbox);

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
});
