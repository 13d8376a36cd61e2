import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isCardDecline } from "@payments-sandbox/client";
import { q } from "../src/db/query.js";
import { balanceEvents, countRows } from "./money-helpers.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  activeCard,
  authorize,
  balanceOf,
  cardTransactionsOf,
  createCard,
  decline,
  eventsFor,
  expectDecline,
  newAccount,
  secondAccount,
  newCustomer,
  purchase,
} from "./card-fixtures.js";
import { cardTransactionSteps } from "./support/card-transactions.js";

// Card transactions: authorizations, listing, and concurrent authorizations.
// Clearing, returns, increments and reversals are in
// card-transactions-clearing.test.ts.
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

  const { simulate, eventsOfCardTransactions, getTransaction, expectEvents } = cardTransactionSteps(
    () => sandbox,
  );

  describe("authorization", () => {
    it("approves with one pull on the funding source: the hold", async () => {
      const { card, customerId, accountId } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500);
      expect(txn).toMatchObject({
        type: "CARD",
        cardId: card.id,
        customerId,
        status: "AUTHORIZED",
        merchant: { descriptor: "BLUE BOTTLE COFFEE SF", mcc: "5814", country: "US" },
        authorizedAmount: usd(2500),
        accountId,
        direction: "DEBIT",
        settledAmount: usd(0),
        refundedAmount: usd(0),
        pullSummary: { count: 1, totalAmount: 2500, pendingCount: 0 },
        settlementSummary: zero,
        refundSummary: zero,
      });
      expect(txn.id).toMatch(/^CardTransaction:[0-9a-f-]{36}$/);
      expect(txn).not.toHaveProperty("declineReason");
      expect(await balanceOf(sandbox, accountId)).toBe(7500);
      expect(await getTransaction(txn.id)).toEqual(txn);
      await expectEvents(txn, ["CARD_TRANSACTION.AUTHORIZED"]);
      // The hold is a balance change: the funding source is announced as it now reads.
      const { data: accounts } = await sandbox.client.GET("/customers/internal-accounts", {
        params: { query: { customerId } },
      });
      const [held, funded] = await balanceEvents(sandbox.client, accountId);
      expect(held).toEqual(accounts!.data.find((a) => a.id === accountId));
      expect(held!.balance.amount).toBe(7500);
      expect(held!.updatedAt).toBe(txn.createdAt);
      expect(funded!.balance.amount).toBe(10_000);
      // The first test of a fresh sandbox also compiles each operation's checks
      // on first use: 20 to 40 seconds when the machine is busy.
    }, 90_000);

    it("declines what the funding source cannot cover: the answer alone, nothing recorded", async () => {
      const { card, customerId, accountId } = await activeCard(sandbox, 1000);
      const declined = await decline(sandbox, card.id, 1001);
      expect(declined.declineReason).toBe("INSUFFICIENT_FUNDS");
      expect(declined.reason).toContain("1001");
      expect(await balanceOf(sandbox, accountId)).toBe(1000);
      // Production keeps no card transaction for a decline and sends no event for it.
      expect(await cardTransactionsOf(sandbox, customerId)).toEqual([]);
      expect(await eventsOfCardTransactions(card.id)).toEqual([]);
      // Only the funding moved the balance.
      expect(await balanceEvents(sandbox.client, accountId)).toHaveLength(1);
      expect((await authorize(sandbox, card.id, 1000)).status).toBe("AUTHORIZED");
      expect(await balanceOf(sandbox, accountId)).toBe(0);
    });

    it("declines above the card's maxSpendPerTransaction, set at issue or by PATCH", async () => {
      const customerId = await newCustomer(sandbox);
      const accountId = await newAccount(sandbox, customerId, 10_000);
      const created = await createCard(sandbox, {
        cardholderId: customerId,
        form: "VIRTUAL",
        fundingSources: [accountId],
        maxSpendPerTransaction: 2500,
      });
      expect(created.maxSpendPerTransaction).toBe(2500);
      const over = await decline(sandbox, created.id, 2501);
      expect(over.declineReason).toBe("MAX_SPEND_EXCEEDED");
      expect(over.reason).toContain("2500");
      expect(await balanceOf(sandbox, accountId)).toBe(10_000);
      expect(await cardTransactionsOf(sandbox, customerId)).toEqual([]);
      expect((await authorize(sandbox, created.id, 2500)).status).toBe("AUTHORIZED");

      const lowered = await sandbox.client.PATCH("/cards/{id}", {
        params: { path: { id: created.id } },
        body: { maxSpendPerTransaction: 1000 },
      });
      expect(lowered.data).toMatchObject({ maxSpendPerTransaction: 1000 });
      expect((await decline(sandbox, created.id, 1001)).declineReason).toBe("MAX_SPEND_EXCEEDED");
      const removed = await sandbox.client.PATCH("/cards/{id}", {
        params: { path: { id: created.id } },
        body: { maxSpendPerTransaction: null },
      });
      expect(removed.data).toMatchObject({ maxSpendPerTransaction: null });
      expect((await authorize(sandbox, created.id, 5000)).status).toBe("AUTHORIZED");
      expect(await balanceOf(sandbox, accountId)).toBe(10_000 - 2500 - 5000);
    });

    it("pulls from the first funding source, in order, that covers the amount", async () => {
      const customerId = await newCustomer(sandbox);
      const small = await newAccount(sandbox, customerId, 500);
      const large = await secondAccount(sandbox, customerId, 5000);
      const created = await createCard(sandbox, {
        cardholderId: customerId,
        form: "VIRTUAL",
        fundingSources: [small, large],
      });
      await authorize(sandbox, created.id, 400);
      expect(await balanceOf(sandbox, small)).toBe(100);
      await authorize(sandbox, created.id, 400);
      expect(await balanceOf(sandbox, small)).toBe(100);
      expect(await balanceOf(sandbox, large)).toBe(4600);
    });

    it("suffix 002 declines INSUFFICIENT_FUNDS and 003 declines CARD_PAUSED, funded or not", async () => {
      const { card, customerId, accountId } = await activeCard(sandbox, 10_000);
      const a = await decline(sandbox, card.id, 100, "ELECTRONICS STORE 002");
      expect(a.declineReason).toBe("INSUFFICIENT_FUNDS");
      expect(a.reason).toContain("002");
      const b = await decline(sandbox, card.id, 100, "COFFEE SHOP 003");
      expect(b.declineReason).toBe("CARD_PAUSED");
      expect(a.issuerTransactionToken).not.toBe(b.issuerTransactionToken);
      expect(await balanceOf(sandbox, accountId)).toBe(10_000);
      expect(await cardTransactionsOf(sandbox, customerId)).toEqual([]);
      expect(await eventsOfCardTransactions(card.id)).toEqual([]);
    });

    it("suffix 005 keeps the pull pending about 30 seconds, then confirms it", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500, "PARKING GARAGE 005");
      expect(txn).toMatchObject({
        status: "AUTHORIZED",
        pullSummary: { count: 1, totalAmount: 2500, pendingCount: 1 },
      });
      // The hold is taken at once, so the amount cannot be spent twice.
      expect(await balanceOf(sandbox, accountId)).toBe(7500);
      await sandbox.client.POST("/sandbox/clock/advance", { body: { seconds: 20 } });
      expect((await getTransaction(txn.id)).pullSummary?.pendingCount).toBe(1);
      const advanced = await sandbox.client.POST("/sandbox/clock/advance", {
        body: { seconds: 15 },
      });
      expect(advanced.data!.jobsRun).toBeGreaterThanOrEqual(1);
      const confirmed = await getTransaction(txn.id);
      expect(confirmed).toMatchObject({
        status: "AUTHORIZED",
        pullSummary: { count: 1, totalAmount: 2500, pendingCount: 0 },
      });
      expect(
        new Date(confirmed.lastEventAt!).getTime() - new Date(txn.authorizedAt).getTime(),
      ).toBe(30_000);
      expect(await balanceOf(sandbox, accountId)).toBe(7500);
      await expectEvents(txn, ["CARD_TRANSACTION.AUTHORIZED", "CARD_TRANSACTION.AUTHORIZED"]);
    });

    it("suffix 006: the pull fails, the hold goes back, the transaction is EXCEPTION", async () => {
      const { card, accountId } = await activeCard(sandbox, 10_000);
      const txn = await authorize(sandbox, card.id, 2500, "HARDWARE DEPOT 006");
      expect(txn).toMatchObject({
        status: "EXCEPTION",
        authorizedAmount: usd(2500),
        pullSummary: { count: 1, totalAmount: 0, pendingCount: 0 },
      });
      expect(await balanceOf(sandbox, accountId)).toBe(10_000);
      const events = await eventsFor(sandbox, txn.id);
      expect(events.map((e) => e.type).sort()).toEqual([
        "CARD_TRANSACTION.AUTHORIZED",
        "CARD_TRANSACTION.EXCEPTION",
      ]);
      const authorized = events.find((e) => e.type === "CARD_TRANSACTION.AUTHORIZED")!;
      expect(authorized.data).toMatchObject({
        status: "AUTHORIZED",
        pullSummary: { count: 1, totalAmount: 2500, pendingCount: 1 },
      });
      const failed = events.find((e) => e.type === "CARD_TRANSACTION.EXCEPTION")!;
      expect(failed.data).toEqual(txn);
      const clear = await simulate("clearing", card.id, {
        cardTransactionId: txn.id,
        amount: 2500,
      });
      expect(clear.response.status).toBe(409);
    });

    it("declines on a card that is FROZEN (CARD_PAUSED), PROCESSING or CLOSED (CARD_NOT_ACTIVE)", async () => {
      const { card, customerId, accountId } = await activeCard(sandbox, 10_000);
      await sandbox.client.PATCH("/cards/{id}", {
        params: { path: { id: card.id } },
        body: { state: "FROZEN" },
      });
      expect((await decline(sandbox, card.id, 100)).declineReason).toBe("CARD_PAUSED");
      await sandbox.client.PATCH("/cards/{id}", {
        params: { path: { id: card.id } },
        body: { state: "CLOSED" },
      });
      expect(await decline(sandbox, card.id, 100)).toMatchObject({
        declineReason: "CARD_NOT_ACTIVE",
        reason: "The card is CLOSED, not ACTIVE",
      });
      const pending = await createCard(sandbox, {
        cardholderId: customerId,
        platformCardId: "waiting-001",
        form: "VIRTUAL",
        fundingSources: [accountId],
      });
      expect(await decline(sandbox, pending.id, 100)).toMatchObject({
        declineReason: "CARD_NOT_ACTIVE",
        reason: "The card is PROCESSING, not ACTIVE",
      });
      expect(await balanceOf(sandbox, accountId)).toBe(10_000);
      expect(await cardTransactionsOf(sandbox, customerId)).toEqual([]);
    });

    it("refuses another currency, and unknown or foreign cards", async () => {
      const { card } = await activeCard(sandbox, 10_000);
      const euros = await sandbox.client.POST("/sandbox/cards/{id}/simulate/authorization", {
        params: { path: { id: card.id } },
        body: { ...purchase(100), currency: { code: "EUR" } },
      });
      expect(euros.response.status).toBe(400);
      expect(euros.error).toMatchObject({ code: "INVALID_CURRENCY" });
      const other = await sandbox.otherPlatformClient();
      const foreign = await other.POST("/sandbox/cards/{id}/simulate/authorization", {
        params: { path: { id: card.id } },
        body: purchase(100),
      });
      expect(foreign.response.status).toBe(404);
      expect(foreign.error).toMatchObject({ code: "REFERENCE_NOT_FOUND" });
    });
  });

  describe("listing", () => {
    it("lists card transactions with the others, newest first, with a cursor, per platform", async () => {
      const { card, customerId, accountId } = await activeCard(sandbox, 10_000);
      const ids: string[] = [];
      for (let i = 1; i <= 5; i++) ids.push((await authorize(sandbox, card.id, i * 10)).id);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const { data } = await sandbox.client.GET("/transactions", {
          params: { query: { customerId, limit: 2, ...(cursor ? { cursor } : {}) } },
        });
        // The account's funding (an incoming transaction) is listed with the purchases.
        expect(data?.totalCount).toBe(6);
        seen.push(...data!.data.map((t) => t.id));
        cursor = data!.nextCursor;
      } while (cursor);
      expect(seen.slice(0, 5)).toEqual([...ids].reverse());
      expect(seen[5]).toMatch(/^Transaction:/);
      const byAccount = await sandbox.client.GET("/transactions", {
        params: { query: { senderAccountIdentifier: accountId } },
      });
      expect(byAccount.data?.data.map((t) => t.id)).toEqual([...ids].reverse());
      const typed = await sandbox.client.GET("/transactions", {
        params: { query: { customerId, type: "OUTGOING" } },
      });
      expect(typed.data?.data).toEqual([]);
      const other = await sandbox.otherPlatformClient();
      const foreign = await other.GET("/transactions/{transactionId}", {
        params: { path: { transactionId: ids[0]! } },
      });
      expect(foreign.response.status).toBe(404);
      expect(foreign.error).toMatchObject({ code: "TRANSACTION_NOT_FOUND" });
      const none = await other.GET("/transactions", { params: { query: { customerId } } });
      expect(none.data!.data).toEqual([]);
    });
  });

  describe("concurrency", () => {
    it("200 concurrent authorizations against funds for 100: exactly 100 approved", async () => {
      const { card, accountId } = await activeCard(sandbox, 100 * 700);
      const results = await Promise.all(
        Array.from({ length: 200 }, () =>
          sandbox.client.POST("/sandbox/cards/{id}/simulate/authorization", {
            params: { path: { id: card.id } },
            body: purchase(700),
          }),
        ),
      );
      expect(results.map((r) => r.response.status)).toEqual(Array(200).fill(202));
      const answers = results.map((r) => r.data!);
      const approved = answers.flatMap((a) => (isCardDecline(a) ? [] : [a]));
      expect(approved.map((a) => a.status)).toEqual(Array(100).fill("AUTHORIZED"));
      const declined = answers.filter(isCardDecline);
      expect(declined).toHaveLength(100);
      expect(declined.map((d) => expectDecline(d, card.id).declineReason)).toEqual(
        Array(100).fill("INSUFFICIENT_FUNDS"),
      );
      expect(await balanceOf(sandbox, accountId)).toBe(0);
      const pulls = await countRows(
        sandbox.server.data,
        q
          .selectFrom("LedgerEntry")
          .where("accountId", "=", accountId)
          .where("kind", "=", "CARD_AUTHORIZATION"),
      );
      expect(pulls).toBe(100);
      // Each approval's event carries the balance its own debit left: 69,300 down to 0.
      const balances = (await balanceEvents(sandbox.client, accountId))
        .map((a) => a.balance.amount)
        .filter((amount) => amount < 100 * 700);
      expect(balances.sort((a, b) => a - b)).toEqual(
        Array.from({ length: 100 }, (_, i) => 700 * i),
      );
    });
  });
});
