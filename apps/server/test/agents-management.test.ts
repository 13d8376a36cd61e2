import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgentClient, verifyWebhook } from "@payments-sandbox/client";
import { q } from "../src/db/query.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { balanceOf, createAccount, createCustomer } from "./money-helpers.js";
import { policy } from "./support/agent-policy.js";
import { agentSteps } from "./support/agents.js";
import { startReceiver, waitFor } from "./webhook-receiver.js";

// The platform managing its agents: listing, pausing, deleting, changing a
// policy and a device code. What an agent sees of its own accounts is in
// agents-own-accounts.test.ts.

describe.each(databases)("managing agents on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const { createAgent, connect, agentSetup, transferOut } = agentSteps(() => sandbox);

  it("lists the platform's agents with their filters, pages and total", async () => {
    const customer = await createCustomer(sandbox.client);
    const first = await createAgent(customer.id);
    const second = await createAgent(customer.id);
    const third = await createAgent(customer.id);
    await connect(second.deviceCode.code);
    await sandbox.client.PATCH("/agents/{agentId}", {
      params: { path: { agentId: third.agent.id } },
      body: { isPaused: true },
    });
    const ids = (page: { data: { id: string }[] } | undefined) => page?.data.map((a) => a.id);
    const all = await sandbox.client.GET("/agents", {
      params: { query: { customerId: customer.id } },
    });
    expect(all.data).toMatchObject({ hasMore: false, totalCount: 3 });
    expect(ids(all.data)).toEqual([third.agent.id, second.agent.id, first.agent.id]);
    const connected = await sandbox.client.GET("/agents", {
      params: { query: { customerId: customer.id, isConnected: true } },
    });
    expect(ids(connected.data)).toEqual([second.agent.id]);
    const waiting = await sandbox.client.GET("/agents", {
      params: { query: { customerId: customer.id, isConnected: false, isPaused: false } },
    });
    expect(ids(waiting.data)).toEqual([first.agent.id]);
    const paused = await sandbox.client.GET("/agents", {
      params: { query: { customerId: customer.id, isPaused: true } },
    });
    expect(paused.data?.data).toMatchObject([{ id: third.agent.id, isPaused: true }]);
    const updatedSince = await sandbox.client.GET("/agents", {
      params: { query: { customerId: customer.id, updatedAfter: third.agent.createdAt } },
    });
    expect(ids(updatedSince.data)).toContain(third.agent.id);
    const before = await sandbox.client.GET("/agents", {
      params: { query: { customerId: customer.id, createdBefore: "2000-01-01T00:00:00Z" } },
    });
    expect(before.data).toMatchObject({ data: [], totalCount: 0 });

    const page1 = await sandbox.client.GET("/agents", {
      params: { query: { customerId: customer.id, limit: 2 } },
    });
    expect(page1.data).toMatchObject({ hasMore: true, totalCount: 3 });
    const page2 = await sandbox.client.GET("/agents", {
      params: { query: { customerId: customer.id, limit: 2, cursor: page1.data!.nextCursor! } },
    });
    expect(ids(page2.data)).toEqual([first.agent.id]);
    expect(page2.data?.hasMore).toBe(false);

    const other = await sandbox.otherPlatformClient();
    const foreign = await other.GET("/agents", { params: { query: { customerId: customer.id } } });
    expect(foreign.data).toMatchObject({ data: [], totalCount: 0 });
  });

  it("pauses an agent at once, lets it read only its own profile, and resumes it", async () => {
    const { account, bank, agentId, agent } = await agentSetup();
    const renamed = await sandbox.client.PATCH("/agents/{agentId}", {
      params: { path: { agentId } },
      body: { name: "Payroll", isPaused: true },
    });
    expect(renamed.data).toMatchObject({ id: agentId, name: "Payroll", isPaused: true });
    const me = await agent.GET("/agents/me", {});
    expect(me.data).toMatchObject({ id: agentId, isPaused: true, name: "Payroll" });
    const moved = await transferOut(agent, account.id, bank.id, 1_000);
    expect(moved.error).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    expect((await agent.GET("/agents/me/transactions", {})).response.status).toBe(401);
    expect((await agent.GET("/agents/me/actions", {})).response.status).toBe(401);
    expect(await balanceOf(sandbox.client, account.id)).toBe(200_000);

    const resumed = await sandbox.client.PATCH("/agents/{agentId}", {
      params: { path: { agentId } },
      body: { isPaused: false },
    });
    expect(resumed.data?.isPaused).toBe(false);
    const again = await transferOut(agent, account.id, bank.id, 1_000);
    expect(again.data).toMatchObject({ status: "APPROVED" });
    expect(await balanceOf(sandbox.client, account.id)).toBe(199_000);

    const empty = await sandbox.client.PATCH("/agents/{agentId}", {
      params: { path: { agentId } },
      body: {},
    });
    expect(empty.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    const other = await sandbox.otherPlatformClient();
    const foreign = await other.PATCH("/agents/{agentId}", {
      params: { path: { agentId } },
      body: { isPaused: true },
    });
    expect(foreign.response.status).toBe(404);
    expect((await agent.GET("/agents/me", {})).data?.isPaused).toBe(false);
  });

  it("deletes an agent: its token stops at once, and what it left waiting can still be decided", async () => {
    const { account, bank, agentId, agent } = await agentSetup();
    const held = await transferOut(agent, account.id, bank.id, 60_000);
    expect(held.data?.status).toBe("PENDING_APPROVAL");
    const other = await sandbox.otherPlatformClient();
    const foreign = await other.DELETE("/agents/{agentId}", { params: { path: { agentId } } });
    expect(foreign.response.status).toBe(404);
    const deleted = await sandbox.client.DELETE("/agents/{agentId}", {
      params: { path: { agentId } },
    });
    expect(deleted.response.status).toBe(204);
    expect((await agent.GET("/agents/me", {})).response.status).toBe(401);
    const read = await sandbox.client.GET("/agents/{agentId}", { params: { path: { agentId } } });
    expect(read.response.status).toBe(404);
    const tokens = await sandbox.server.data.all(
      q.selectFrom("AgentAccessToken").select("tokenHash").where("agentId", "=", agentId),
    );
    expect(tokens).toEqual([]);
    const approved = await sandbox.client.POST("/agents/{agentId}/actions/{actionId}/approve", {
      params: { path: { agentId, actionId: held.data!.id } },
    });
    expect(approved.data).toMatchObject({
      status: "APPROVED",
      transaction: { status: "COMPLETED" },
    });
    expect(await balanceOf(sandbox.client, account.id)).toBe(140_000);
    const twice = await sandbox.client.DELETE("/agents/{agentId}", {
      params: { path: { agentId } },
    });
    expect(twice.response.status).toBe(404);
  });

  it("changes part of a policy, applied from the agent's next request", async () => {
    const { customer, account, bank, agentId, agent } = await agentSetup({
      policy: policy({
        spendingLimits: { currency: "USD", perTransactionLimit: 11_600, dailyLimit: 116_000 },
        approvalThresholds: {},
      }),
    });
    expect((await transferOut(agent, account.id, bank.id, 100)).data?.status).toBe("APPROVED");
    const held = await sandbox.client.PATCH("/agents/{agentId}/policy", {
      params: { path: { agentId } },
      body: { defaultExecutionMode: "APPROVAL_REQUIRED" },
    });
    expect(held.data?.policy).toEqual({
      permissions: ["VIEW_TRANSACTIONS", "CREATE_TRANSFERS", "CREATE_QUOTES", "EXECUTE_QUOTES"],
      defaultExecutionMode: "APPROVAL_REQUIRED",
      spendingLimits: { currency: "USD", perTransactionLimit: 11_600, dailyLimit: 116_000 },
      approvalThresholds: {},
    });
    expect((await transferOut(agent, account.id, bank.id, 100)).data?.status).toBe(
      "PENDING_APPROVAL",
    );
    // A new currency alone converts the limits kept (1.00 EUR is 1.16 USD); null removes one.
    const euros = await sandbox.client.PATCH("/agents/{agentId}/policy", {
      params: { path: { agentId } },
      body: {
        spendingLimits: { currency: "EUR", dailyLimit: null },
        permissions: ["VIEW_TRANSACTIONS"],
      },
    });
    expect(euros.data?.policy).toMatchObject({
      permissions: ["VIEW_TRANSACTIONS"],
      spendingLimits: { currency: "EUR", perTransactionLimit: 10_000, dailyLimit: null },
    });
    expect((await agent.GET("/agents/me", {})).data?.policy).toEqual(euros.data?.policy);
    const refused = await transferOut(agent, account.id, bank.id, 100);
    expect(refused.error).toMatchObject({
      status: 403,
      details: { permission: "CREATE_TRANSFERS" },
    });

    const currency = await sandbox.client.PATCH("/agents/{agentId}/policy", {
      params: { path: { agentId } },
      body: { spendingLimits: { currency: "XYZ" } },
    });
    expect(currency.error).toMatchObject({ status: 400, code: "INVALID_CURRENCY" });
    const stranger = await createCustomer(sandbox.client, { lastName: "Stranger" });
    const theirs = await createAccount(sandbox.client, stranger.id, "USD", 0);
    const foreignAccount = await sandbox.client.PATCH("/agents/{agentId}/policy", {
      params: { path: { agentId } },
      body: { accountRestrictions: { allowedAccountIds: [theirs.id] } },
    });
    expect(foreignAccount.error).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
      details: { errors: [{ field: "policy.accountRestrictions.allowedAccountIds.0" }] },
    });
    const kept = await sandbox.client.GET("/agents/{agentId}", { params: { path: { agentId } } });
    expect(kept.data?.policy).toEqual(euros.data?.policy);
    expect(kept.data?.customerId).toBe(customer.id);
  });

  it("replaces a device code that was not redeemed, and refuses one for a connected agent", async () => {
    const customer = await createCustomer(sandbox.client);
    const { agent, deviceCode } = await createAgent(customer.id);
    const status = (code: string) =>
      sandbox.client.GET("/agents/device-codes/{code}/status", { params: { path: { code } } });
    expect((await status(deviceCode.code)).data).toEqual({
      code: deviceCode.code,
      redeemed: false,
    });
    const fresh = await sandbox.client.POST("/agents/{agentId}/device-codes", {
      params: { path: { agentId: agent.id } },
    });
    expect(fresh.response.status).toBe(201);
    expect(fresh.data).toMatchObject({ agentId: agent.id, redeemed: false });
    expect(fresh.data!.code).not.toBe(deviceCode.code);
    // The old code is gone everywhere.
    expect((await status(deviceCode.code)).response.status).toBe(404);
    const anonymous = createAgentClient({ baseUrl: sandbox.server.baseUrl });
    const old = await anonymous.POST("/agents/device-codes/{code}/redeem", {
      params: { path: { code: deviceCode.code } },
    });
    expect(old.response.status).toBe(404);
    const api = await connect(fresh.data!.code);
    expect((await api.GET("/agents/me", {})).data).toMatchObject({
      id: agent.id,
      isConnected: true,
    });
    expect((await status(fresh.data!.code)).data?.redeemed).toBe(true);
    const connected = await sandbox.client.POST("/agents/{agentId}/device-codes", {
      params: { path: { agentId: agent.id } },
    });
    expect(connected.error).toMatchObject({ status: 409, code: "CONFLICT" });
    // Another platform cannot learn anything about the code.
    const other = await sandbox.otherPlatformClient();
    const foreign = await other.GET("/agents/device-codes/{code}/status", {
      params: { path: { code: fresh.data!.code } },
    });
    expect(foreign.response.status).toBe(404);
  });

  it("writes no action and no event for a movement the policy refuses", async () => {
    const { account, bank, agentId, agent } = await agentSetup({
      policy: policy({
        spendingLimits: { currency: "USD", perTransactionLimit: 100_000, dailyTransactionLimit: 1 },
      }),
    });
    expect((await transferOut(agent, account.id, bank.id, 60_000)).data?.status).toBe(
      "PENDING_APPROVAL",
    );
    const refused = await transferOut(agent, account.id, bank.id, 60_000);
    expect(refused.error).toMatchObject({ status: 403, code: "VELOCITY_LIMIT_EXCEEDED" });
    const actions = await sandbox.server.data.all(
      q.selectFrom("AgentAction").select("id").where("agentId", "=", agentId),
    );
    expect(actions).toHaveLength(1);
    const events = await sandbox.server.data.all(
      q
        .selectFrom("WebhookEvent")
        .select("objectId")
        .where("type", "=", "AGENT_ACTION.PENDING_APPROVAL")
        .where("objectId", "in", actions.map((a) => a.id).concat("none")),
    );
    expect(events).toHaveLength(1);
    const queue = await sandbox.client.GET("/agents/approvals", {
      params: { query: { agentId, sortOrder: "asc" } },
    });
    expect(queue.data?.totalCount).toBe(1);
  });

  it("delivers AGENT_ACTION.PENDING_APPROVAL signed, like every event", async () => {
    const receiver = await startReceiver();
    try {
      await sandbox.client.PATCH("/config", { body: { webhookEndpoint: receiver.url } });
      const { account, bank, agent } = await agentSetup();
      const held = await transferOut(agent, account.id, bank.id, 70_000);
      const action = held.data!;
      const [event] = await sandbox.server.data.all(
        q.selectFrom("WebhookEvent").select("id").where("objectId", "=", action.id),
      );
      await waitFor("the action's event", () => receiver.delivered().includes(event!.id));
      const request = receiver.requests.find((r) => r.eventId === event!.id)!;
      expect(JSON.parse(request.rawBody)).toMatchObject({
        type: "AGENT_ACTION.PENDING_APPROVAL",
        data: action,
      });
      const pem = (await sandbox.client.GET("/sandbox/keys")).data!.webhookPublicKey;
      expect(verifyWebhook(request.rawBody, request.signature, pem)).toBe(true);
    } finally {
      await sandbox.client.PATCH("/config", { body: { webhookEndpoint: "" } });
      await receiver.close();
    }
  });
});
