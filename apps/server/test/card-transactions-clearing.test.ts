import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { activeCard, authorize, balanceOf, decline } from "./card-fixtures.js";
import { cardTransactionSteps } from "./support/card-transactions.js";

// Card transactions after their authorization: clearing, returns, increments
// and reversals.
//
// After every test, test/ledgers-balanced.ts (a setup file of every test
// file) checks that each account's balance is what its ledger says.

const zero = { count: 0, totalAmount: 0 };
/** An amount as the API writes it (the currency's other fields are checked elsewhere). */
const usd = (amount: number) => ({ amount, currency: { code: "USD" } });

describe.each(databases)("card transactions on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const { simulate, ok, getTransaction, expectEvents } = cardTransactionSteps(() => sandbox);

  describe("clearing", () => {
    it("above the authorization: a post-hoc pull for the difference, SETTLED", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      const settled = await ok("clearing", card.id, { cardTransactionId: txn.id, amount: 2750 });
      expect(settled).toMatchObject({
        status: "SETTLED",
        authorizedAmount: usd(2500),
        settledAmount: usd(2750),
        pullSummary: { count: 2, totalAmount: 2750, pendingCount: 0 },
        settlementSummary: { count: 1, totalAmount: 2750 },
        refundSummary: zero,
      });
      expect(await balanceOf(sandbox, accountId)).toBe(7250);
      await expectEvents(txn, ["CARD_TRANSACTION.AUTHORIZED", "CARD_TRANSACTION.SETTLED"]);
      // The file's first test also compiles each operation's checks on first use.
    }, 90_000);

    it("at the authorization: SETTLED with the one pull", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      const settled = await ok("clearing", card.id, { cardTransactionId: txn.id, amount: 2500 });
      expect(settled).toMatchObject({
        status: "SETTLED",
        settledAmount: usd(2500),
        pullSummary: { count: 1, totalAmount: 2500, pendingCount: 0 },
        settlementSummary: { count: 1, totalAmount: 2500 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(7500);
    });

    it("below the authorization: PARTIALLY_SETTLED, the rest of the hold released", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      const partial = await ok("clearing", card.id, { cardTransactionId: txn.id, amount: 2000 });
      expect(partial).toMatchObject({
        status: "PARTIALLY_SETTLED",
        authorizedAmount: usd(2500),
        settledAmount: usd(2000),
        pullSummary: { count: 1, totalAmount: 2500, pendingCount: 0 },
        settlementSummary: { count: 1, totalAmount: 2000 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(8000);
      await expectEvents(txn, [
        "CARD_TRANSACTION.AUTHORIZED",
        "CARD_TRANSACTION.PARTIALLY_SETTLED",
      ]);
    });

    it("zero: the authorization expires, its hold is released, and it closes SETTLED with nothing settled", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      const expired = await ok("clearing", card.id, { cardTransactionId: txn.id, amount: 0 });
      expect(expired).toMatchObject({
        status: "SETTLED",
        authorizedAmount: usd(2500),
        settledAmount: usd(0),
        pullSummary: { count: 1, totalAmount: 2500, pendingCount: 0 },
        settlementSummary: zero,
      });
      expect(await balanceOf(sandbox, accountId)).toBe(10_000);
      await expectEvents(txn, ["CARD_TRANSACTION.AUTHORIZED", "CARD_TRANSACTION.SETTLED"]);
      // Closed: it is neither cleared again nor refunded (nothing was settled).
      const late = await simulate("clearing", card.id, { cardTransactionId: txn.id, amount: 10 });
      expect(late.response.status).toBe(409);
      const refund = await simulate("return", card.id, { cardTransactionId: txn.id, amount: 1 });
      expect(refund.response.status).toBe(400);
      expect(refund.error).toMatchObject({ code: "INVALID_AMOUNT" });
      expect(await balanceOf(sandbox, accountId)).toBe(10_000);
    });

    it("above what the funding source can cover: the post-hoc pull fails, EXCEPTION", async () => {
      const { card, accountId } = await activeCard(sandbox, 3000);
      const txn = await authorize(sandbox, card.id, 2500);
      const failed = await ok("clearing", card.id, { cardTransactionId: txn.id, amount: 4000 });
      expect(failed).toMatchObject({
        status: "EXCEPTION",
        settledAmount: usd(4000),
        pullSummary: { count: 2, totalAmount: 2500, pendingCount: 0 },
        settlementSummary: { count: 1, totalAmount: 4000 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(500);
      await expectEvents(txn, ["CARD_TRANSACTION.AUTHORIZED", "CARD_TRANSACTION.EXCEPTION"]);
    });

    it("clears only an AUTHORIZED transaction of this card, once", async () => {
      const { card } = await activeCard(sandbox, 10_000);
      const other = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      const wrongCard = await simulate("clearing", other.card.id, {
        cardTransactionId: txn.id,
        amount: 2500,
      });
      expect(wrongCard.response.status).toBe(404);
      expect(wrongCard.error).toMatchObject({ code: "TRANSACTION_NOT_FOUND" });
      await ok("clearing", card.id, { cardTransactionId: txn.id, amount: 2500 });
      const twice = await simulate("clearing", card.id, { cardTransactionId: txn.id, amount: 10 });
      expect(twice.response.status).toBe(409);
      expect(twice.error).toMatchObject({ code: "INVALID_STATE_TRANSITION" });
      // A decline has no transaction to clear: its issuer token names none.
      const declined = await decline(sandbox, card.id, 100_000);
      const clearDeclined = await simulate("clearing", card.id, {
        cardTransactionId: `CardTransaction:${declined.issuerTransactionToken}`,
        amount: 10,
      });
      expect(clearDeclined.response.status).toBe(404);
      expect(clearDeclined.error).toMatchObject({ code: "TRANSACTION_NOT_FOUND" });
    });
  });

  describe("returns", () => {
    it("a full return refunds the funding source: REFUNDED", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      await ok("clearing", card.id, { cardTransactionId: txn.id, amount: 2750 });
      const refunded = await ok("return", card.id, { cardTransactionId: txn.id, amount: 2750 });
      expect(refunded).toMatchObject({
        status: "REFUNDED",
        settledAmount: usd(2750),
        refundedAmount: usd(2750),
        refundSummary: { count: 1, totalAmount: 2750 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(10_000);
      await expectEvents(txn, [
        "CARD_TRANSACTION.AUTHORIZED",
        "CARD_TRANSACTION.SETTLED",
        "CARD_TRANSACTION.REFUNDED",
      ]);
    });

    it("a partial return stays SETTLED with refundedAmount; the rest makes it REFUNDED", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      await ok("clearing", card.id, { cardTransactionId: txn.id, amount: 2500 });
      const partial = await ok("return", card.id, { cardTransactionId: txn.id, amount: 1000 });
      expect(partial).toMatchObject({
        status: "SETTLED",
        refundedAmount: usd(1000),
        refundSummary: { count: 1, totalAmount: 1000 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(8500);
      const tooMuch = await simulate("return", card.id, {
        cardTransactionId: txn.id,
        amount: 1501,
      });
      expect(tooMuch.response.status).toBe(400);
      expect(tooMuch.error).toMatchObject({ code: "INVALID_AMOUNT" });
      const rest = await ok("return", card.id, { cardTransactionId: txn.id, amount: 1500 });
      expect(rest).toMatchObject({
        status: "REFUNDED",
        refundedAmount: usd(2500),
        refundSummary: { count: 2, totalAmount: 2500 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(10_000);
      await expectEvents(txn, [
        "CARD_TRANSACTION.AUTHORIZED",
        "CARD_TRANSACTION.SETTLED",
        "CARD_TRANSACTION.SETTLED",
        "CARD_TRANSACTION.REFUNDED",
      ]);
    });

    it("a partial return of a partially settled transaction keeps PARTIALLY_SETTLED", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      await ok("clearing", card.id, { cardTransactionId: txn.id, amount: 2000 });
      const partial = await ok("return", card.id, { cardTransactionId: txn.id, amount: 500 });
      expect(partial).toMatchObject({ status: "PARTIALLY_SETTLED", refundedAmount: usd(500) });
      expect(await balanceOf(sandbox, accountId)).toBe(8500);
    });

    it("refuses to return what was never settled", async () => {
      const { card } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      const early = await simulate("return", card.id, { cardTransactionId: txn.id, amount: 100 });
      expect(early.response.status).toBe(409);
      expect(early.error).toMatchObject({ code: "INVALID_STATE_TRANSITION" });
    });
  });

  describe("incremental authorization and reversal", () => {
    it("an increment is another pull; clearing it all settles with both pulls", async () => {
      const { card, accountId } = await activeCard(sandbox, 4000);
      const txn = await authorize(sandbox, card.id, 2500);
      const bigger = await ok("increment", card.id, { cardTransactionId: txn.id, amount: 1000 });
      expect(bigger).toMatchObject({
        status: "AUTHORIZED",
        authorizedAmount: usd(3500),
        pullSummary: { count: 2, totalAmount: 3500, pendingCount: 0 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(500);
      const refused = await simulate("increment", card.id, {
        cardTransactionId: txn.id,
        amount: 501,
      });
      expect(refused.response.status).toBe(400);
      expect(refused.error).toMatchObject({ code: "AMOUNT_OUT_OF_RANGE" });
      expect((await getTransaction(txn.id)).authorizedAmount.amount).toBe(3500);
      const settled = await ok("clearing", card.id, { cardTransactionId: txn.id, amount: 3500 });
      expect(settled).toMatchObject({
        status: "SETTLED",
        pullSummary: { count: 2, totalAmount: 3500 },
        settlementSummary: { count: 1, totalAmount: 3500 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(500);
      await expectEvents(txn, [
        "CARD_TRANSACTION.AUTHORIZED",
        "CARD_TRANSACTION.AUTHORIZED",
        "CARD_TRANSACTION.SETTLED",
      ]);
    });

    it("refuses an increment on a frozen card", async () => {
      const { card } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      await sandbox.client.PATCH("/cards/{id}", {
        params: { path: { id: card.id } },
        body: { state: "FROZEN" },
      });
      const refused = await simulate("increment", card.id, {
        cardTransactionId: txn.id,
        amount: 100,
      });
      expect(refused.response.status).toBe(409);
    });

    it("a partial reversal releases part of the hold; a full one closes it SETTLED with nothing settled", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      const smaller = await ok("reversal", card.id, { cardTransactionId: txn.id, amount: 500 });
      expect(smaller).toMatchObject({ status: "AUTHORIZED", authorizedAmount: usd(2000) });
      expect(await balanceOf(sandbox, accountId)).toBe(8000);
      const tooMuch = await simulate("reversal", card.id, {
        cardTransactionId: txn.id,
        amount: 2001,
      });
      expect(tooMuch.response.status).toBe(400);
      expect(tooMuch.error).toMatchObject({ code: "INVALID_AMOUNT" });
      const reversed = await ok("reversal", card.id, { cardTransactionId: txn.id });
      expect(reversed).toMatchObject({
        status: "SETTLED",
        authorizedAmount: usd(0),
        settledAmount: usd(0),
        pullSummary: { count: 1, totalAmount: 2500, pendingCount: 0 },
        settlementSummary: zero,
      });
      expect(await balanceOf(sandbox, accountId)).toBe(10_000);
      const late = await simulate("clearing", card.id, { cardTransactionId: txn.id, amount: 1 });
      expect(late.response.status).toBe(409);
      await expectEvents(txn, [
        "CARD_TRANSACTION.AUTHORIZED",
        "CARD_TRANSACTION.AUTHORIZED",
        "CARD_TRANSACTION.SETTLED",
      ]);
    });

    it("a partial reversal then a smaller clearing settles what was cleared", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      await ok("reversal", card.id, { cardTransactionId: txn.id, amount: 1000 });
      const settled = await ok("clearing", card.id, { cardTransactionId: txn.id, amount: 1500 });
      expect(settled).toMatchObject({ status: "SETTLED", settledAmount: usd(1500) });
      expect(await balanceOf(sandbox, accountId)).toBe(8500);
    });
  });
});
