import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  advanceClock,
  balanceOf,
  createBankAccount,
  eventsAbout,
  transactionOf,
} from "./money-helpers.js";
import { policy } from "./support/agent-policy.js";
import { agentSteps } from "./support/agents.js";

// An agent's actions held for the platform's approval, and what deciding them does.

describe.each(databases)("agents on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const { agentSetup, approveAction, rejectAction, heldTransactionOf, transferOut } = agentSteps(
    () => sandbox,
  );

  describe("approvals", () => {
    it("holds a transfer above approvalThresholds.amount until the platform approves its action", async () => {
      const { customer, account, bank, agent, created } = await agentSetup();
      const held = await transferOut(agent, account.id, bank.id, 75_000);
      expect(held.response.status).toBe(201);
      expect(held.data).toMatchObject({
        type: "TRANSFER_OUT",
        status: "PENDING_APPROVAL",
        platformCustomerId: customer.platformCustomerId,
      });
      expect(held.data).not.toHaveProperty("transaction");
      expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);
      const action = held.data!;
      // The platform learns of it by webhook, with the whole action, and finds it in its queue.
      expect(await eventsAbout(sandbox.server.data, action.id)).toEqual([
        { type: "AGENT_ACTION.PENDING_APPROVAL", data: action },
      ]);
      const queue = await sandbox.client.GET("/agents/approvals", {
        params: { query: { agentId: created.agent.id } },
      });
      expect(queue.data).toMatchObject({ data: [action], hasMore: false, totalCount: 1 });
      // The agent cannot decide its own action.
      const own = await agent.POST("/agents/{agentId}/actions/{actionId}/approve", {
        params: { path: { agentId: action.agentId, actionId: action.id } },
      });
      expect(own.response.status).toBe(401);
      const approved = await approveAction(action);
      expect(approved.response.status).toBe(200);
      expect(approved.data).toMatchObject({
        id: action.id,
        status: "APPROVED",
        transaction: { status: "COMPLETED" },
      });
      expect(await balanceOf(sandbox.client, account.id)).toBe(125_000);
      const polled = await agent.GET("/agents/me/actions/{actionId}", {
        params: { path: { actionId: action.id } },
      });
      expect(polled.data).toEqual(approved.data);
      const twice = await approveAction(action);
      expect(twice.error).toMatchObject({ status: 409, code: "INVALID_STATE_TRANSITION" });
      const emptied = await sandbox.client.GET("/agents/approvals", {
        params: { query: { agentId: created.agent.id } },
      });
      expect(emptied.data?.data).toEqual([]);
      const events = await eventsAbout(sandbox.server.data, approved.data!.transaction!.id);
      expect(events.map((e) => e.type)).toEqual([
        "OUTGOING_PAYMENT.PENDING_AUTHORIZATION",
        "OUTGOING_PAYMENT.COMPLETED",
      ]);
      // At the threshold itself, it runs on its own.
      const at = await transferOut(agent, account.id, bank.id, 50_000);
      expect(at.data).toMatchObject({ status: "APPROVED", transaction: { status: "COMPLETED" } });
      // Another platform sees neither the action nor its agent.
      const other = await sandbox.otherPlatformClient();
      const foreign = await other.POST("/agents/{agentId}/actions/{actionId}/approve", {
        params: { path: { agentId: action.agentId, actionId: at.data!.id } },
      });
      expect(foreign.response.status).toBe(404);
      // The file's first test also compiles each operation's checks on first use.
    }, 90_000);

    it("moves the action with its transaction when the platform decides the transaction itself", async () => {
      const { account, bank, agent } = await agentSetup();
      const held = await transferOut(agent, account.id, bank.id, 75_000);
      const transactionId = await heldTransactionOf(held.data!);
      const approved = await sandbox.client.POST("/transactions/{transactionId}/approve", {
        params: { path: { transactionId } },
      });
      expect(approved.data?.status).toBe("COMPLETED");
      const { data: action } = await agent.GET("/agents/me/actions/{actionId}", {
        params: { path: { actionId: held.data!.id } },
      });
      expect(action).toMatchObject({ status: "APPROVED", transaction: { id: transactionId } });
      const second = await transferOut(agent, account.id, bank.id, 60_000);
      await sandbox.client.POST("/transactions/{transactionId}/reject", {
        params: { path: { transactionId: await heldTransactionOf(second.data!) } },
        body: { reason: "not this week" },
      });
      const { data: rejected } = await agent.GET("/agents/me/actions/{actionId}", {
        params: { path: { actionId: second.data!.id } },
      });
      expect(rejected).toMatchObject({ status: "REJECTED", rejectionReason: "not this week" });
    });

    it("holds every movement when defaultExecutionMode is APPROVAL_REQUIRED", async () => {
      const { account, bank, agent } = await agentSetup({
        policy: policy({ defaultExecutionMode: "APPROVAL_REQUIRED", approvalThresholds: {} }),
      });
      const small = await transferOut(agent, account.id, bank.id, 1);
      expect(small.data?.status).toBe("PENDING_APPROVAL");
      const pull = await agent.POST("/agents/me/transfer-in", {
        body: { source: { accountId: bank.id }, destination: { accountId: account.id }, amount: 1 },
      });
      expect(pull.data).toMatchObject({
        type: "TRANSFER_IN",
        status: "PENDING_APPROVAL",
        transferDetails: { sourceAccountId: bank.id, destinationAccountId: account.id },
      });
      const waiting = await agent.GET("/agents/me/actions", {
        params: { query: { status: "PENDING_APPROVAL" } },
      });
      expect(waiting.data?.data.map((a) => a.id)).toEqual([pull.data!.id, small.data!.id]);
      expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);
    });

    it("approves a held transfer with a delayed outcome, which then runs its course", async () => {
      const { account, bank, agent } = await agentSetup({ bankSuffix: "005" });
      const held = await transferOut(agent, account.id, bank.id, 60_000);
      const approved = await approveAction(held.data!);
      expect(approved.data).toMatchObject({
        status: "APPROVED",
        transaction: { status: "PENDING" },
      });
      expect(await balanceOf(sandbox.client, account.id)).toBe(140_000);
      await advanceClock(sandbox.client, 31);
      expect(await transactionOf(sandbox.client, approved.data!.transaction!.id)).toMatchObject({
        status: "FAILED",
        failureReason: "COUNTERPARTY_POST_TX_FAILED",
      });
      expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);
    });

    it("rejects a held transfer with a reason: nothing moves", async () => {
      const { account, bank, agent } = await agentSetup();
      const held = await transferOut(agent, account.id, bank.id, 90_000);
      const transactionId = await heldTransactionOf(held.data!);
      const rejected = await rejectAction(held.data!, "over budget");
      expect(rejected.response.status).toBe(200);
      expect(rejected.data).toMatchObject({ status: "REJECTED", rejectionReason: "over budget" });
      expect(rejected.data).not.toHaveProperty("transaction");
      expect(await transactionOf(sandbox.client, transactionId)).toMatchObject({
        status: "FAILED",
      });
      expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);
      const again = await rejectAction(held.data!);
      expect(again.error).toMatchObject({ status: 409, code: "INVALID_STATE_TRANSITION" });
      const events = await eventsAbout(sandbox.server.data, transactionId);
      expect(events.map((e) => e.type)).toEqual([
        "OUTGOING_PAYMENT.PENDING_AUTHORIZATION",
        "OUTGOING_PAYMENT.FAILED",
      ]);
    });

    it("keeps a held transfer waiting when the balance cannot cover it at approval", async () => {
      const { account, bank, agent } = await agentSetup({ balance: 60_000 });
      const held = await transferOut(agent, account.id, bank.id, 55_000);
      await sandbox.client.POST("/transfer-out", {
        body: {
          source: { accountId: account.id },
          destination: { accountId: bank.id },
          amount: 10_000,
        },
      });
      const refused = await approveAction(held.data!);
      expect(refused.error).toMatchObject({
        status: 400,
        code: "INVALID_INPUT",
        reason: "Insufficient balance",
      });
      const { data: action } = await agent.GET("/agents/me/actions/{actionId}", {
        params: { path: { actionId: held.data!.id } },
      });
      expect(action?.status).toBe("PENDING_APPROVAL");
      expect(await balanceOf(sandbox.client, account.id)).toBe(50_000);
    });

    it("holds an agent's quote execution above the threshold until approved", async () => {
      const { customer, account, agent } = await agentSetup();
      const iban = await createBankAccount(sandbox.client, customer.id, "000", "EUR");
      const quote = await agent.POST("/agents/me/quotes", {
        body: {
          source: { sourceType: "ACCOUNT", accountId: account.id },
          destination: { destinationType: "ACCOUNT", accountId: iban.id },
          lockedCurrencySide: "SENDING",
          lockedCurrencyAmount: 80_000,
        },
      });
      expect(quote.response.status).toBe(201);
      const quoteId = quote.data!.id;
      expect(
        (await agent.GET("/agents/me/quotes/{quoteId}", { params: { path: { quoteId } } })).response
          .status,
      ).toBe(200);
      const executed = await agent.POST("/agents/me/quotes/{quoteId}/execute", {
        params: { path: { quoteId } },
      });
      expect(executed.response.status).toBe(200);
      expect(executed.data).toMatchObject({
        type: "EXECUTE_QUOTE",
        status: "PENDING_APPROVAL",
        quote: { id: quoteId, status: "PROCESSING" },
      });
      expect(executed.data).not.toHaveProperty("transferDetails");
      const transactionId = quote.data!.transactionId!;
      expect((await transactionOf(sandbox.client, transactionId)).status).toBe(
        "PENDING_AUTHORIZATION",
      );
      expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);
      const approved = await approveAction(executed.data!);
      expect(approved.data).toMatchObject({
        status: "APPROVED",
        transaction: { id: transactionId, status: "COMPLETED" },
      });
      const after = await sandbox.client.GET("/quotes/{quoteId}", {
        params: { path: { quoteId } },
      });
      expect(after.data?.status).toBe("COMPLETED");
      expect(await balanceOf(sandbox.client, account.id)).toBe(120_000);

      const realtime = await agent.POST("/agents/me/quotes", {
        body: {
          source: { sourceType: "REALTIME_FUNDING", currency: "USD" },
          destination: { destinationType: "ACCOUNT", accountId: iban.id },
          lockedCurrencySide: "SENDING",
          lockedCurrencyAmount: 1_000,
        },
      });
      expect(realtime.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
      const tooBig = await agent.POST("/agents/me/quotes", {
        body: {
          source: { sourceType: "ACCOUNT", accountId: account.id },
          destination: { destinationType: "ACCOUNT", accountId: iban.id },
          lockedCurrencySide: "SENDING",
          lockedCurrencyAmount: 150_000,
        },
      });
      expect(tooBig.error).toMatchObject({ status: 400, code: "AMOUNT_OUT_OF_RANGE" });
    });

    it("fails a held quote execution approved after the quote expired, and moves nothing", async () => {
      const { customer, account, agent } = await agentSetup();
      const iban = await createBankAccount(sandbox.client, customer.id, "000", "EUR");
      const { data: quote } = await agent.POST("/agents/me/quotes", {
        body: {
          source: { sourceType: "ACCOUNT", accountId: account.id },
          destination: { destinationType: "ACCOUNT", accountId: iban.id },
          lockedCurrencySide: "SENDING",
          lockedCurrencyAmount: 80_000,
        },
      });
      const executed = await agent.POST("/agents/me/quotes/{quoteId}/execute", {
        params: { path: { quoteId: quote!.id } },
      });
      expect(executed.data?.status).toBe("PENDING_APPROVAL");
      await advanceClock(sandbox.client, 301);
      const late = await approveAction(executed.data!);
      expect(late.response.status).toBe(200);
      expect(late.data).toMatchObject({
        status: "FAILED",
        transaction: { id: quote!.transactionId, status: "FAILED" },
      });
      expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);
      const { data: read } = await sandbox.client.GET("/quotes/{quoteId}", {
        params: { path: { quoteId: quote!.id } },
      });
      expect(read?.status).toBe("FAILED");
    });

    it("counts a quote's execution, not its creation, towards the daily limit", async () => {
      const { customer, account, agent } = await agentSetup({
        policy: policy({
          spendingLimits: { currency: "USD", perTransactionLimit: 100_000, dailyLimit: 30_000 },
          approvalThresholds: {},
        }),
      });
      const iban = await createBankAccount(sandbox.client, customer.id, "000", "EUR");
      const quoteOf = async (amount: number) => {
        const { data } = await agent.POST("/agents/me/quotes", {
          body: {
            source: { sourceType: "ACCOUNT", accountId: account.id },
            destination: { destinationType: "ACCOUNT", accountId: iban.id },
            lockedCurrencySide: "SENDING",
            lockedCurrencyAmount: amount,
          },
        });
        return data!.id;
      };
      const first = await quoteOf(20_000);
      const second = await quoteOf(20_000);
      const run = (quoteId: string) =>
        agent.POST("/agents/me/quotes/{quoteId}/execute", { params: { path: { quoteId } } });
      const done = await run(first);
      expect(done.data).toMatchObject({ status: "APPROVED", quote: { id: first } });
      const over = await run(second);
      expect(over.error).toMatchObject({
        status: 403,
        code: "VELOCITY_LIMIT_EXCEEDED",
        details: { limit: "spendingLimits.dailyLimit", dailySpend: 20_000 },
      });
      const still = await sandbox.client.GET("/quotes/{quoteId}", {
        params: { path: { quoteId: second } },
      });
      expect(still.data?.status).toBe("PENDING");
    });
  });
});
