import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { activeCard, authorize, balanceOf, purchase } from "./card-fixtures.js";
import { cardNetworkSteps } from "./support/card-network.js";

// The card network's messages that change a transaction already made (issue
// 16): authorization advice and return reversal. Checked as in
// card-network.test.ts: the transaction, the money on the funding source, and
// the CARD_TRANSACTION.* events.

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

  const { movesOf, created, change, changed, getTransaction, expectEvents } = cardNetworkSteps(
    () => sandbox,
  );

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
      // The file's first test also compiles each operation's checks on first use.
    }, 90_000);

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
