import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  advanceClock,
  balanceOf,
  createAccount,
  createBankAccount,
  createCustomer,
} from "./money-helpers.js";
import { policy } from "./support/agent-policy.js";
import { agentSteps } from "./support/agents.js";

// What an agent's policy lets it do: its permissions, and its limits per
// movement, per day and per month.

const DAY = 24 * 3600;

describe.each(databases)("agents on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const { createAgent, connect, agentSetup, rejectAction, transferOut } = agentSteps(() => sandbox);

  describe("permissions", () => {
    it("refuses with 403 FORBIDDEN what the policy does not grant, and writes nothing", async () => {
      const { customer, account, bank, agent } = await agentSetup({
        policy: policy({ permissions: ["VIEW_TRANSACTIONS"] }),
      });
      const out = await transferOut(agent, account.id, bank.id, 1_000);
      expect(out.response.status).toBe(403);
      expect(out.error).toMatchObject({
        code: "FORBIDDEN",
        details: { permission: "CREATE_TRANSFERS" },
      });
      const pull = await agent.POST("/agents/me/transfer-in", {
        body: { source: { accountId: bank.id }, destination: { accountId: account.id }, amount: 1 },
      });
      expect(pull.error).toMatchObject({
        status: 403,
        details: { permission: "CREATE_TRANSFERS" },
      });
      const iban = await createBankAccount(sandbox.client, customer.id, "000", "EUR");
      const quote = await agent.POST("/agents/me/quotes", {
        body: {
          source: { sourceType: "ACCOUNT", accountId: account.id },
          destination: { destinationType: "ACCOUNT", accountId: iban.id },
          lockedCurrencySide: "SENDING",
          lockedCurrencyAmount: 1_000,
        },
      });
      expect(quote.error).toMatchObject({ status: 403, details: { permission: "CREATE_QUOTES" } });
      expect((await agent.GET("/agents/me/transactions", {})).response.status).toBe(200);
      expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);
      const { data: listed } = await sandbox.client.GET("/transactions", {
        params: { query: { customerId: customer.id, type: "OUTGOING" } },
      });
      expect(listed?.data).toEqual([]);
      // The file's first test also compiles each operation's checks on first use.
    }, 90_000);

    it("separates reading transactions, quoting and executing", async () => {
      const { customer, account, agent } = await agentSetup({
        policy: policy({ permissions: ["CREATE_QUOTES"] }),
      });
      // Reads declare no 403: a permission they lack is refused as unauthorized.
      const listed = await agent.GET("/agents/me/transactions", {});
      expect(listed.error).toMatchObject({
        status: 401,
        code: "UNAUTHORIZED",
        details: { permission: "VIEW_TRANSACTIONS" },
      });
      const accounts = await agent.GET("/agents/me/internal-accounts", {});
      expect(accounts.error).toMatchObject({
        status: 401,
        details: { permission: "VIEW_TRANSACTIONS" },
      });
      const iban = await createBankAccount(sandbox.client, customer.id, "000", "EUR");
      const body = {
        source: { sourceType: "ACCOUNT" as const, accountId: account.id },
        destination: { destinationType: "ACCOUNT" as const, accountId: iban.id },
        lockedCurrencySide: "SENDING" as const,
        lockedCurrencyAmount: 1_000,
      };
      const immediate = await agent.POST("/agents/me/quotes", {
        body: { ...body, immediatelyExecute: true },
      });
      expect(immediate.error).toMatchObject({
        status: 403,
        details: { permission: "EXECUTE_QUOTES" },
      });
      const quote = await agent.POST("/agents/me/quotes", { body });
      expect(quote.response.status).toBe(201);
      const quoteId = quote.data!.id;
      const read = await agent.GET("/agents/me/quotes/{quoteId}", {
        params: { path: { quoteId } },
      });
      expect(read.data?.status).toBe("PENDING");
      const executed = await agent.POST("/agents/me/quotes/{quoteId}/execute", {
        params: { path: { quoteId } },
      });
      expect(executed.error).toMatchObject({
        status: 403,
        details: { permission: "EXECUTE_QUOTES" },
      });
      const after = await sandbox.client.GET("/quotes/{quoteId}", {
        params: { path: { quoteId } },
      });
      expect(after.data?.status).toBe("PENDING");
      expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);
    });
  });

  describe("limits per movement", () => {
    it("refuses an amount above spendingLimits.perTransactionLimit with 400 AMOUNT_OUT_OF_RANGE", async () => {
      const { account, bank, agent } = await agentSetup({
        policy: policy({ approvalThresholds: {} }),
      });
      const above = await transferOut(agent, account.id, bank.id, 100_001);
      expect(above.response.status).toBe(400);
      expect(above.error).toMatchObject({
        code: "AMOUNT_OUT_OF_RANGE",
        details: {
          limit: "spendingLimits.perTransactionLimit",
          perTransactionLimit: 100_000,
          currency: "USD",
        },
      });
      expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);
      const at = await transferOut(agent, account.id, bank.id, 100_000);
      expect(at.data?.transaction?.status).toBe("COMPLETED");
      expect(await balanceOf(sandbox.client, account.id)).toBe(100_000);
    });

    it("compares an amount in another currency at its value in the policy's currency", async () => {
      // 1 EUR is worth 1.16 USD in the sandbox's table: 100.00 EUR is the 116.00 USD limit.
      const { customer, agent } = await agentSetup({
        policy: policy({
          spendingLimits: { currency: "USD", perTransactionLimit: 11_600 },
          approvalThresholds: {},
        }),
      });
      const euros = await createAccount(sandbox.client, customer.id, "EUR", 50_000);
      const euroBank = await createBankAccount(sandbox.client, customer.id, "789", "EUR");
      const above = await transferOut(agent, euros.id, euroBank.id, 10_001);
      expect(above.error).toMatchObject({
        status: 400,
        code: "AMOUNT_OUT_OF_RANGE",
        details: { perTransactionLimit: 11_600, currency: "USD" },
      });
      const at = await transferOut(agent, euros.id, euroBank.id, 10_000);
      expect(at.data?.transaction?.status).toBe("COMPLETED");
      expect(await balanceOf(sandbox.client, euros.id)).toBe(40_000);
    });

    it("applies an account's rule instead of the policy's limit and mode", async () => {
      const customer = await createCustomer(sandbox.client);
      const dollars = await createAccount(sandbox.client, customer.id, "USD", 200_000);
      const euros = await createAccount(sandbox.client, customer.id, "EUR", 200_000);
      const bank = await createBankAccount(sandbox.client, customer.id, "789");
      const euroBank = await createBankAccount(sandbox.client, customer.id, "789", "EUR");
      const { deviceCode } = await createAgent(
        customer.id,
        policy({
          approvalThresholds: {},
          accountRestrictions: {
            accountRules: [
              { accountId: dollars.id, perTransactionLimit: 10_000 },
              {
                accountId: euros.id,
                executionMode: "APPROVAL_REQUIRED",
                perTransactionLimit: null,
              },
            ],
          },
        }),
      );
      const agent = await connect(deviceCode.code);
      const above = await transferOut(agent, dollars.id, bank.id, 10_001);
      expect(above.error).toMatchObject({
        status: 400,
        code: "AMOUNT_OUT_OF_RANGE",
        details: {
          limit: "accountRestrictions.accountRules.perTransactionLimit",
          perTransactionLimit: 10_000,
          internalAccountId: dollars.id,
        },
      });
      const within = await transferOut(agent, dollars.id, bank.id, 10_000);
      expect(within.data?.transaction?.status).toBe("COMPLETED");
      // The euro account keeps the policy's limit, and holds every movement for approval.
      const held = await transferOut(agent, euros.id, euroBank.id, 1_000);
      expect(held.data?.status).toBe("PENDING_APPROVAL");
      expect(await balanceOf(sandbox.client, euros.id)).toBe(200_000);
      const tooBig = await transferOut(agent, euros.id, euroBank.id, 90_000);
      expect(tooBig.error).toMatchObject({
        status: 400,
        details: { limit: "spendingLimits.perTransactionLimit" },
      });
    });

    it("limits the agent to allowedAccountIds with 403 FORBIDDEN", async () => {
      const customer = await createCustomer(sandbox.client);
      const dollars = await createAccount(sandbox.client, customer.id, "USD", 100_000);
      const euros = await createAccount(sandbox.client, customer.id, "EUR", 100_000);
      const euroBank = await createBankAccount(sandbox.client, customer.id, "789", "EUR");
      const iban = await createBankAccount(sandbox.client, customer.id, "000", "EUR");
      const bank = await createBankAccount(sandbox.client, customer.id, "789");
      const { deviceCode } = await createAgent(
        customer.id,
        policy({ accountRestrictions: { allowedAccountIds: [dollars.id] } }),
      );
      const agent = await connect(deviceCode.code);
      const out = await transferOut(agent, euros.id, euroBank.id, 1_000);
      expect(out.error).toMatchObject({
        status: 403,
        code: "FORBIDDEN",
        details: { internalAccountId: euros.id },
      });
      const pull = await agent.POST("/agents/me/transfer-in", {
        body: {
          source: { accountId: euroBank.id },
          destination: { accountId: euros.id },
          amount: 1_000,
        },
      });
      expect(pull.error).toMatchObject({ status: 403, code: "FORBIDDEN" });
      const quote = await agent.POST("/agents/me/quotes", {
        body: {
          source: { sourceType: "ACCOUNT", accountId: euros.id },
          destination: { destinationType: "ACCOUNT", accountId: bank.id },
          lockedCurrencySide: "SENDING",
          lockedCurrencyAmount: 1_000,
        },
      });
      expect(quote.error).toMatchObject({ status: 403, code: "FORBIDDEN" });
      expect(await balanceOf(sandbox.client, euros.id)).toBe(100_000);
      const allowed = await agent.POST("/agents/me/quotes", {
        body: {
          source: { sourceType: "ACCOUNT", accountId: dollars.id },
          destination: { destinationType: "ACCOUNT", accountId: iban.id },
          lockedCurrencySide: "SENDING",
          lockedCurrencyAmount: 1_000,
        },
      });
      expect(allowed.response.status).toBe(201);
    });
  });

  describe("daily and monthly limits", () => {
    it("stops at spendingLimits.dailyLimit with 403 VELOCITY_LIMIT_EXCEEDED until the next day", async () => {
      const { account, bank, agent, customer, created } = await agentSetup({
        balance: 500_000,
        policy: policy({
          spendingLimits: { currency: "USD", perTransactionLimit: 100_000, dailyLimit: 50_000 },
          approvalThresholds: {},
        }),
      });
      expect(
        (await transferOut(agent, account.id, bank.id, 30_000)).data?.transaction?.status,
      ).toBe("COMPLETED");
      const over = await transferOut(agent, account.id, bank.id, 25_000);
      expect(over.response.status).toBe(403);
      expect(over.error).toMatchObject({
        code: "VELOCITY_LIMIT_EXCEEDED",
        details: { limit: "spendingLimits.dailyLimit", dailyLimit: 50_000, dailySpend: 30_000 },
      });
      // A movement that failed gives its amount back (suffix 002 fails at once).
      const failing = await createBankAccount(sandbox.client, customer.id, "002");
      const failed = await transferOut(agent, account.id, failing.id, 20_000);
      expect(failed.data?.transaction?.status).toBe("FAILED");
      expect(
        (await transferOut(agent, account.id, bank.id, 20_000)).data?.transaction?.status,
      ).toBe("COMPLETED");
      const full = await transferOut(agent, account.id, bank.id, 1);
      expect(full.error).toMatchObject({ status: 403, details: { dailySpend: 50_000 } });
      expect(await balanceOf(sandbox.client, account.id)).toBe(450_000);
      // The platform sees the same usage on the agent: three movements today, 50,000 spent.
      const read = await sandbox.client.GET("/agents/{agentId}", {
        params: { path: { agentId: created.agent.id } },
      });
      expect(read.response.status).toBe(200);
      expect(read.data).toMatchObject({
        id: created.agent.id,
        customerId: customer.id,
        isConnected: true,
        usage: { dailyTransactionCount: 3, dailySpend: 50_000, monthlySpend: 50_000 },
      });
      await advanceClock(sandbox.client, DAY);
      expect(
        (await transferOut(agent, account.id, bank.id, 50_000)).data?.transaction?.status,
      ).toBe("COMPLETED");
    });

    it("gives back the amount of a movement the platform rejected", async () => {
      const { account, bank, agent } = await agentSetup({
        policy: policy({
          spendingLimits: { currency: "USD", perTransactionLimit: 100_000, dailyLimit: 80_000 },
        }),
      });
      const held = await transferOut(agent, account.id, bank.id, 60_000);
      expect(held.data?.status).toBe("PENDING_APPROVAL");
      // Held, it counts: nothing more fits today.
      const over = await transferOut(agent, account.id, bank.id, 30_000);
      expect(over.error).toMatchObject({ status: 403, details: { dailySpend: 60_000 } });
      const rejected = await rejectAction(held.data!, "not now");
      expect(rejected.data?.status).toBe("REJECTED");
      expect(
        (await transferOut(agent, account.id, bank.id, 30_000)).data?.transaction?.status,
      ).toBe("COMPLETED");
    });

    it("counts every movement started towards dailyTransactionLimit", async () => {
      const { account, bank, agent } = await agentSetup({
        policy: policy({
          spendingLimits: {
            currency: "USD",
            perTransactionLimit: 100_000,
            dailyTransactionLimit: 2,
          },
          approvalThresholds: {},
        }),
      });
      expect((await transferOut(agent, account.id, bank.id, 100)).response.status).toBe(201);
      const pulled = await agent.POST("/agents/me/transfer-in", {
        body: {
          source: { accountId: bank.id },
          destination: { accountId: account.id },
          amount: 100,
        },
      });
      expect(pulled.response.status).toBe(201);
      const third = await transferOut(agent, account.id, bank.id, 100);
      expect(third.error).toMatchObject({
        status: 403,
        code: "VELOCITY_LIMIT_EXCEEDED",
        details: {
          limit: "spendingLimits.dailyTransactionLimit",
          dailyTransactionLimit: 2,
          dailyTransactionCount: 2,
        },
      });
      expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);
    });

    it("stops at spendingLimits.monthlyLimit", async () => {
      const { account, bank, agent } = await agentSetup({
        policy: policy({
          spendingLimits: { currency: "USD", perTransactionLimit: 100_000, monthlyLimit: 40_000 },
          approvalThresholds: {},
        }),
      });
      expect((await transferOut(agent, account.id, bank.id, 30_000)).response.status).toBe(201);
      const over = await transferOut(agent, account.id, bank.id, 15_000);
      expect(over.error).toMatchObject({
        status: 403,
        code: "VELOCITY_LIMIT_EXCEEDED",
        details: {
          limit: "spendingLimits.monthlyLimit",
          monthlyLimit: 40_000,
          monthlySpend: 30_000,
        },
      });
      expect(await balanceOf(sandbox.client, account.id)).toBe(170_000);
    });

    it("lets concurrent movements past the daily limit no further than it allows", async () => {
      // Held for approval, they debit nothing: no balance guard orders them, only the policy's.
      const { account, bank, agent } = await agentSetup({
        policy: policy({
          defaultExecutionMode: "APPROVAL_REQUIRED",
          spendingLimits: { currency: "USD", perTransactionLimit: 100_000, dailyLimit: 50_000 },
          approvalThresholds: {},
        }),
      });
      const results = await Promise.all(
        Array.from({ length: 8 }, () => transferOut(agent, account.id, bank.id, 10_000)),
      );
      const statuses = results.map((r) => r.response.status).sort();
      expect(statuses).toEqual([201, 201, 201, 201, 201, 403, 403, 403]);
      const { data: held } = await sandbox.client.GET("/transactions", {
        params: { query: { customerId: account.customerId!, status: "PENDING_AUTHORIZATION" } },
      });
      expect(held?.data).toHaveLength(5);
    });
  });
});
