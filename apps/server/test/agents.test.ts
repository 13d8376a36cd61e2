import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgentClient, type Schemas } from "@payments-sandbox/client";
import { q } from "../src/db/query.js";
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

// Agents: creating and connecting one, and what it may call for its customer.
// Its permissions and limits are in agents-limits.test.ts, the platform's
// approvals in agents-approvals.test.ts.

type AgentPolicy = Schemas["AgentPolicy"];

const DAY = 24 * 3600;

describe.each(databases)("agents on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const { anonymous, createAgent, agentSetup, transferOut } = agentSteps(() => sandbox);

  describe("creating and connecting", () => {
    it("answers the agent in the live shape with a device code that expires in a day", async () => {
      const customer = await createCustomer(sandbox.client);
      const agentPolicy = policy({
        spendingLimits: { currency: "USD", perTransactionLimit: 100_000, dailyLimit: null },
      });
      const { agent, deviceCode } = await createAgent(customer.id, agentPolicy, "Payroll bot");
      expect(agent).toMatchObject({
        name: "Payroll bot",
        customerId: customer.id,
        isPaused: false,
        isConnected: false,
        policy: agentPolicy,
        usage: { dailyTransactionCount: 0, dailySpend: 0, monthlySpend: 0 },
      });
      expect(agent.id).toMatch(/^Agent:/);
      // The counters start again at the next UTC day and month of the sandbox clock.
      const created = new Date(agent.createdAt);
      const tomorrow = new Date(
        Date.UTC(created.getUTCFullYear(), created.getUTCMonth(), created.getUTCDate() + 1),
      );
      const nextMonth = new Date(Date.UTC(created.getUTCFullYear(), created.getUTCMonth() + 1, 1));
      expect(agent.usage.dailyResetDate).toBe(tomorrow.toISOString().slice(0, 10));
      expect(agent.usage.monthlyResetMonth).toBe(nextMonth.toISOString().slice(0, 7));
      expect(deviceCode).toMatchObject({ agentId: agent.id, redeemed: false });
      expect(deviceCode.code).toMatch(/^[B-Z]{4}-[B-Z]{4}-[B-Z]{4}$/);
      expect(Date.parse(deviceCode.expiresAt) - created.getTime()).toBe(DAY * 1000);
    });

    it("redeems a device code once, without platform credentials, for a working token", async () => {
      const customer = await createCustomer(sandbox.client);
      const { agent, deviceCode } = await createAgent(customer.id, policy());
      // Typed by a person: any case will do.
      const { data: redeemed, response } = await anonymous().POST(
        "/agents/device-codes/{code}/redeem",
        { params: { path: { code: deviceCode.code.toLowerCase() } } },
      );
      expect(response.status).toBe(200);
      expect(redeemed).toEqual({
        agentId: agent.id,
        agentName: "Invoice payer",
        accessToken: expect.stringMatching(/^agt_/) as unknown as string,
        policy: policy(),
      });
      const api = createAgentClient({
        baseUrl: sandbox.server.baseUrl,
        accessToken: redeemed!.accessToken,
      });
      expect((await api.GET("/agents/me/transactions", {})).response.status).toBe(200);

      const again = await anonymous().POST("/agents/device-codes/{code}/redeem", {
        params: { path: { code: deviceCode.code } },
      });
      expect(again.response.status).toBe(400);
      expect(again.error).toMatchObject({
        code: "INVALID_INPUT",
        message: expect.stringMatching(/redeemed/) as unknown,
      });
      // Only a hash of the token is kept.
      const stored = await sandbox.server.data.all(
        q.selectFrom("AgentAccessToken").selectAll().where("agentId", "=", agent.id),
      );
      expect(stored).toHaveLength(1);
      expect(JSON.stringify(stored)).not.toContain(redeemed!.accessToken);
    });

    it("answers an unknown code 404 and reads no credentials sent with a code", async () => {
      const unknown = await anonymous().POST("/agents/device-codes/{code}/redeem", {
        params: { path: { code: "BCDF-GHJK-LMNP" } },
      });
      expect(unknown.response.status).toBe(404);
      // Nothing about any platform or agent in the answer.
      expect(unknown.error).toEqual({
        status: 404,
        code: "REFERENCE_NOT_FOUND",
        message: "No agent has this device code",
      });
      // Another platform's credentials, or broken ones, change nothing: the code is the proof.
      const customer = await createCustomer(sandbox.client);
      const first = await createAgent(customer.id, policy());
      const other = await sandbox.otherPlatformClient();
      const byOther = await other.POST("/agents/device-codes/{code}/redeem", {
        params: { path: { code: first.deviceCode.code } },
      });
      expect(byOther.data?.agentId).toBe(first.agent.id);
      const second = await createAgent(customer.id, policy());
      const broken = await sandbox.rawFetch(
        `/agents/device-codes/${second.deviceCode.code}/redeem`,
        { method: "POST", auth: "Bearer not-a-token" },
      );
      expect(broken.status).toBe(200);
    });

    it("expires a device code 24 hours after it was issued, on the sandbox clock", async () => {
      const customer = await createCustomer(sandbox.client);
      const early = await createAgent(customer.id, policy());
      const late = await createAgent(customer.id, policy());
      await advanceClock(sandbox.client, DAY - 60);
      const inTime = await anonymous().POST("/agents/device-codes/{code}/redeem", {
        params: { path: { code: early.deviceCode.code } },
      });
      expect(inTime.response.status).toBe(200);
      await advanceClock(sandbox.client, 61);
      const expired = await anonymous().POST("/agents/device-codes/{code}/redeem", {
        params: { path: { code: late.deviceCode.code } },
      });
      expect(expired.response.status).toBe(400);
      expect(expired.error).toMatchObject({
        code: "INVALID_INPUT",
        details: { expiresAt: new Date(late.deviceCode.expiresAt).toISOString() },
      });
    });

    it("keeps the access token valid as the sandbox clock moves on", async () => {
      const { agent } = await agentSetup();
      await advanceClock(sandbox.client, 40 * DAY);
      expect((await agent.GET("/agents/me/transactions", {})).response.status).toBe(200);
    });

    it("refuses a customer or a policy it cannot apply with 400", async () => {
      const customer = await createCustomer(sandbox.client);
      const theirs = await createAccount(
        sandbox.client,
        (await createCustomer(sandbox.client, { lastName: "Other" })).id,
      );
      const attempt = (customerId: string, agentPolicy: AgentPolicy) =>
        sandbox.client.POST("/agents", {
          body: { name: "Agent", customerId, policy: agentPolicy },
        });
      const unknown = await attempt("Customer:00000000-0000-4000-8000-000000000000", policy());
      expect(unknown.error).toMatchObject({
        status: 400,
        code: "INVALID_INPUT",
        details: { errors: [{ field: "customerId" }] },
      });
      const foreignAccount = await attempt(
        customer.id,
        policy({ accountRestrictions: { allowedAccountIds: [theirs.id] } }),
      );
      expect(foreignAccount.error).toMatchObject({
        status: 400,
        code: "INVALID_INPUT",
        details: { errors: [{ field: "policy.accountRestrictions.allowedAccountIds.0" }] },
      });
      const currency = await attempt(
        customer.id,
        policy({ spendingLimits: { currency: "XYZ", perTransactionLimit: 1 } }),
      );
      expect(currency.error).toMatchObject({ status: 400, code: "INVALID_CURRENCY" });
      const threshold = await attempt(customer.id, policy({ approvalThresholds: { amount: 10 } }));
      expect(threshold.error).toMatchObject({
        status: 400,
        code: "INVALID_INPUT",
        details: { errors: [{ field: "policy.approvalThresholds.currency" }] },
      });
      const negative = await attempt(
        customer.id,
        policy({ spendingLimits: { currency: "USD", perTransactionLimit: -1 } }),
      );
      expect(negative.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
      const other = await sandbox.otherPlatformClient();
      const foreignCustomer = await other.POST("/agents", {
        body: { name: "Agent", customerId: customer.id, policy: policy() },
      });
      expect(foreignCustomer.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
      const agents = await sandbox.server.data.all(
        q.selectFrom("Agent").select("id").where("customerId", "=", customer.id),
      );
      expect(agents).toEqual([]);
    });
  });

  describe("acting for its customer", () => {
    it("lets an agent move money within its policy, on its own customer only", async () => {
      const { account, bank, created, agent } = await agentSetup();
      const done = await transferOut(agent, account.id, bank.id, 20_000);
      expect(done.response.status).toBe(201);
      expect(done.data).toMatchObject({
        type: "TRANSFER_OUT",
        status: "APPROVED",
        agentId: created.agent.id,
        customerId: created.agent.customerId,
        transferDetails: {
          amount: 20_000,
          currency: "USD",
          sourceAccountId: account.id,
          destinationAccountId: bank.id,
        },
        transaction: { status: "COMPLETED", agentId: created.agent.id },
      });
      expect(await balanceOf(sandbox.client, account.id)).toBe(180_000);
      const read = await agent.GET("/agents/me/transactions/{transactionId}", {
        params: { path: { transactionId: done.data!.transaction!.id } },
      });
      expect(read.response.status).toBe(200);
      const action = await agent.GET("/agents/me/actions/{actionId}", {
        params: { path: { actionId: done.data!.id } },
      });
      expect(action.data).toEqual(done.data);

      const stranger = await createCustomer(sandbox.client, { lastName: "Stranger" });
      const theirs = await createAccount(sandbox.client, stranger.id, "USD", 10_000);
      const theirBank = await createBankAccount(sandbox.client, stranger.id, "789");
      const hidden = await transferOut(agent, theirs.id, bank.id, 1_000);
      expect(hidden.error).toMatchObject({ status: 404, code: "REFERENCE_NOT_FOUND" });
      const hiddenBank = await agent.POST("/agents/me/transfer-in", {
        body: {
          source: { accountId: theirBank.id },
          destination: { accountId: account.id },
          amount: 1_000,
        },
      });
      expect(hiddenBank.error).toMatchObject({ status: 404, code: "REFERENCE_NOT_FOUND" });
      const { data: theirTransfer } = await sandbox.client.POST("/transfer-out", {
        body: {
          source: { accountId: theirs.id },
          destination: { accountId: theirBank.id },
          amount: 500,
        },
      });
      const theirRead = await agent.GET("/agents/me/transactions/{transactionId}", {
        params: { path: { transactionId: theirTransfer!.id } },
      });
      expect(theirRead.error).toMatchObject({ status: 404, code: "TRANSACTION_NOT_FOUND" });
      const listed = await agent.GET("/agents/me/transactions", {
        params: { query: { limit: 100 } },
      });
      const customers = (listed.data?.data ?? []).map((t) => t.customerId);
      expect(customers.length).toBeGreaterThan(0);
      expect(new Set(customers)).toEqual(new Set([created.agent.customerId]));
      expect(await balanceOf(sandbox.client, theirs.id)).toBe(9_500);
    });

    it("accepts the bearer token only on operations that list AgentAuth", async () => {
      const { customer, account, bank, agent } = await agentSetup();
      expect((await agent.GET("/customers", {})).response.status).toBe(401);
      const accounts = await agent.GET("/customers/internal-accounts", {
        params: { query: { customerId: customer.id } },
      });
      expect(accounts.error).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
      const update = await agent.PATCH("/customers/{customerId}", {
        params: { path: { customerId: customer.id } },
        body: { customerType: "INDIVIDUAL", currencies: ["USD", "EUR"] },
      });
      expect(update.error).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
      const fund = await agent.POST("/sandbox/internal-accounts/{accountId}/fund", {
        params: { path: { accountId: account.id } },
        body: { amount: 1 },
      });
      expect(fund.response.status).toBe(401);
      const created = await agent.POST("/agents", {
        body: { name: "Mine", customerId: customer.id, policy: policy() },
      });
      expect(created.response.status).toBe(401);
      // The platform's own money operations are BasicAuth only, as in production.
      const direct = await agent.POST("/transfer-out", {
        body: { source: { accountId: account.id }, destination: { accountId: bank.id }, amount: 1 },
      });
      expect(direct.error).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
      expect((await agent.GET("/transactions", {})).response.status).toBe(401);
      const bogus = createAgentClient({ baseUrl: sandbox.server.baseUrl, accessToken: "agt_no" });
      expect((await bogus.GET("/agents/me/transactions", {})).response.status).toBe(401);
      expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);
    });
  });

  it("reads an agent of this platform only", async () => {
    const customer = await createCustomer(sandbox.client);
    const { agent } = await createAgent(customer.id, policy());
    const mine = await sandbox.client.GET("/agents/{agentId}", {
      params: { path: { agentId: agent.id } },
    });
    expect(mine.data).toEqual(agent);
    const other = await sandbox.otherPlatformClient();
    const foreign = await other.GET("/agents/{agentId}", {
      params: { path: { agentId: agent.id } },
    });
    expect(foreign.response.status).toBe(404);
    expect(foreign.error).toMatchObject({ code: "REFERENCE_NOT_FOUND" });
  });
});
