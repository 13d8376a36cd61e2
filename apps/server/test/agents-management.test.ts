import { SANDBOX_SCA_CODE } from "@payments-sandbox/sandbox-rules";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createAgentClient,
  verifyWebhook,
  type SandboxClient,
  type Schemas,
} from "@payments-sandbox/client";
import { q } from "../src/db/query.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  balanceOf,
  bankAccountInfo,
  createAccount,
  createBankAccount,
  createCustomer,
} from "./money-helpers.js";
import { policy } from "./support/agent-policy.js";
import { startReceiver, waitFor } from "./webhook-receiver.js";

type AgentPolicy = Schemas["AgentPolicy"];

describe.each(databases)("managing agents on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  async function createAgent(customerId: string, agentPolicy: AgentPolicy = policy()) {
    const { data, error } = await sandbox.client.POST("/agents", {
      body: { name: "Invoice payer", customerId, policy: agentPolicy },
    });
    if (!data) throw new Error(`agent not created: ${JSON.stringify(error)}`);
    return data;
  }

  async function connect(code: string): Promise<SandboxClient> {
    const anonymous = createAgentClient({ baseUrl: sandbox.server.baseUrl });
    const { data, error } = await anonymous.POST("/agents/device-codes/{code}/redeem", {
      params: { path: { code } },
    });
    if (!data) throw new Error(`device code not redeemed: ${JSON.stringify(error)}`);
    return createAgentClient({ baseUrl: sandbox.server.baseUrl, accessToken: data.accessToken });
  }

  async function agentSetup(agentPolicy: AgentPolicy = policy()) {
    const customer = await createCustomer(sandbox.client);
    const account = await createAccount(sandbox.client, customer.id, "USD", 200_000);
    const bank = await createBankAccount(sandbox.client, customer.id, "789");
    const created = await createAgent(customer.id, agentPolicy);
    const agent = await connect(created.deviceCode.code);
    return { customer, account, bank, agentId: created.agent.id, agent };
  }

  function transferOut(agent: SandboxClient, from: string, to: string, amount: number) {
    return agent.POST("/agents/me/transfer-out", {
      body: { source: { accountId: from }, destination: { accountId: to }, amount },
    });
  }

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
    const { customer, account, bank, agentId, agent } = await agentSetup(
      policy({
        spendingLimits: { currency: "USD", perTransactionLimit: 11_600, dailyLimit: 116_000 },
        approvalThresholds: {},
      }),
    );
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

  describe("the agent's own accounts", () => {
    it("lists only its customer's internal accounts that its policy allows", async () => {
      const customer = await createCustomer(sandbox.client);
      const dollars = await createAccount(sandbox.client, customer.id, "USD", 1_000);
      const euros = await createAccount(sandbox.client, customer.id, "EUR", 2_000);
      await createAccount(sandbox.client, (await createCustomer(sandbox.client)).id, "USD", 5);
      const free = await connect((await createAgent(customer.id)).deviceCode.code);
      const all = await free.GET("/agents/me/internal-accounts", {});
      expect(new Set(all.data?.data.map((a) => a.id))).toEqual(new Set([dollars.id, euros.id]));
      const inEuros = await free.GET("/agents/me/internal-accounts", {
        params: { query: { currency: "EUR" } },
      });
      expect(inEuros.data?.data.map((a) => a.id)).toEqual([euros.id]);
      const bound = await connect(
        (
          await createAgent(
            customer.id,
            policy({ accountRestrictions: { allowedAccountIds: [euros.id] } }),
          )
        ).deviceCode.code,
      );
      const allowed = await bound.GET("/agents/me/internal-accounts", {});
      expect(allowed.data).toMatchObject({ data: [{ id: euros.id }], totalCount: 1 });
    });

    it("manages its customer's external accounts with MANAGE_EXTERNAL_ACCOUNTS only", async () => {
      const customer = await createCustomer(sandbox.client);
      const stranger = await createCustomer(sandbox.client, { lastName: "Stranger" });
      const theirs = await createBankAccount(sandbox.client, stranger.id, "789");
      const agent = await connect(
        (
          await createAgent(
            customer.id,
            policy({ permissions: ["VIEW_TRANSACTIONS", "MANAGE_EXTERNAL_ACCOUNTS"] }),
          )
        ).deviceCode.code,
      );
      const accountInfo = bankAccountInfo("456");
      const created = await agent.POST("/agents/me/external-accounts", {
        body: { currency: "USD", accountInfo },
      });
      expect(created.response.status).toBe(201);
      expect(created.data).toMatchObject({ customerId: customer.id, currency: "USD" });
      const duplicate = await agent.POST("/agents/me/external-accounts", {
        body: { currency: "USD", accountInfo },
      });
      expect(duplicate.error).toMatchObject({ status: 409, code: "CONFLICT" });
      const forOther = await agent.POST("/agents/me/external-accounts", {
        body: { customerId: stranger.id, currency: "USD", accountInfo },
      });
      expect(forOther.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
      const listed = await agent.GET("/agents/me/external-accounts", {});
      expect(listed.data).toMatchObject({ data: [{ id: created.data!.id }], totalCount: 1 });
      const read = await agent.GET("/agents/me/external-accounts/{externalAccountId}", {
        params: { path: { externalAccountId: created.data!.id } },
      });
      expect(read.data).toEqual(created.data);
      const hidden = await agent.GET("/agents/me/external-accounts/{externalAccountId}", {
        params: { path: { externalAccountId: theirs.id } },
      });
      expect(hidden.response.status).toBe(404);
      const hiddenDelete = await agent.DELETE("/agents/me/external-accounts/{externalAccountId}", {
        params: { path: { externalAccountId: theirs.id } },
      });
      expect(hiddenDelete.response.status).toBe(404);
      const removed = await agent.DELETE("/agents/me/external-accounts/{externalAccountId}", {
        params: { path: { externalAccountId: created.data!.id } },
      });
      expect(removed.response.status).toBe(204);

      // A trusted beneficiary (an EEA customer's) is deleted with its trust:
      // production declares no 409 for the agent, and removing a way to pay
      // escalates nothing. The platform's own delete still refuses one.
      const european = await createCustomer(sandbox.client, { lastName: "Europa", region: "DE" });
      const europeanAgent = await connect(
        (await createAgent(european.id, policy({ permissions: ["MANAGE_EXTERNAL_ACCOUNTS"] })))
          .deviceCode.code,
      );
      const beneficiary = await europeanAgent.POST("/agents/me/external-accounts", {
        body: { currency: "USD", accountInfo: bankAccountInfo("321") },
      });
      const ea = { params: { path: { externalAccountId: beneficiary.data!.id } } };
      const trust = await sandbox.client.POST(
        "/customers/external-accounts/{externalAccountId}/trust",
        ea,
      );
      const trusted = await sandbox.client.POST(
        "/customers/external-accounts/{externalAccountId}/trust/confirm",
        { ...ea, body: { challengeId: trust.data?.scaChallenge?.id, code: SANDBOX_SCA_CODE } },
      );
      expect(trusted.data).toEqual({ trusted: true });
      const kept = await sandbox.client.DELETE(
        "/customers/external-accounts/{externalAccountId}",
        ea,
      );
      expect(kept.error).toMatchObject({ status: 409, code: "BENEFICIARY_TRUSTED" });
      const dropped = await europeanAgent.DELETE(
        "/agents/me/external-accounts/{externalAccountId}",
        ea,
      );
      expect(dropped.response.status).toBe(204);
      const afterwards = await Promise.all([
        europeanAgent.GET("/agents/me/external-accounts/{externalAccountId}", ea),
        sandbox.client.GET("/customers/external-accounts/{externalAccountId}", ea),
        europeanAgent.DELETE("/agents/me/external-accounts/{externalAccountId}", ea),
        sandbox.client.POST("/customers/external-accounts/{externalAccountId}/untrust", ea),
      ]);
      expect(afterwards.map((r) => r.response.status)).toEqual([404, 404, 404, 404]);
      const { data: europeanLeft } = await sandbox.client.GET("/customers/external-accounts", {
        params: { query: { customerId: european.id } },
      });
      expect(europeanLeft?.data).toEqual([]);

      const reader = await connect(
        (await createAgent(customer.id, policy({ permissions: ["VIEW_TRANSACTIONS"] }))).deviceCode
          .code,
      );
      const refused = await reader.GET("/agents/me/external-accounts", {});
      expect(refused.error).toMatchObject({
        status: 401,
        code: "UNAUTHORIZED",
        details: { permission: "MANAGE_EXTERNAL_ACCOUNTS" },
      });
      const notCreated = await reader.POST("/agents/me/external-accounts", {
        body: { currency: "USD", accountInfo: bankAccountInfo("457") },
      });
      expect(notCreated.response.status).toBe(401);
      const { data: left } = await sandbox.client.GET("/customers/external-accounts", {
        params: { query: { customerId: customer.id } },
      });
      expect(left?.data).toEqual([]);
    });

    it("shows an agent only the quotes it made itself", async () => {
      const { customer, account, agent } = await agentSetup();
      const sibling = await connect((await createAgent(customer.id)).deviceCode.code);
      const iban = await createBankAccount(sandbox.client, customer.id, "000", "EUR");
      const { data: quote } = await agent.POST("/agents/me/quotes", {
        body: {
          source: { sourceType: "ACCOUNT", accountId: account.id },
          destination: { destinationType: "ACCOUNT", accountId: iban.id },
          lockedCurrencySide: "SENDING",
          lockedCurrencyAmount: 1_000,
        },
      });
      const mine = await agent.GET("/agents/me/quotes/{quoteId}", {
        params: { path: { quoteId: quote!.id } },
      });
      expect(mine.data?.id).toBe(quote!.id);
      const notTheirs = await sibling.GET("/agents/me/quotes/{quoteId}", {
        params: { path: { quoteId: quote!.id } },
      });
      expect(notTheirs.response.status).toBe(404);
      const notExecuted = await sibling.POST("/agents/me/quotes/{quoteId}/execute", {
        params: { path: { quoteId: quote!.id } },
      });
      expect(notExecuted.response.status).toBe(404);
      const ownList = await sibling.GET("/agents/me/actions", {});
      expect(ownList.data).toMatchObject({ data: [], totalCount: 0 });
    });
  });

  it("writes no action and no event for a movement the policy refuses", async () => {
    const { account, bank, agentId, agent } = await agentSetup(
      policy({
        spendingLimits: { currency: "USD", perTransactionLimit: 100_000, dailyTransactionLimit: 1 },
      }),
    );
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
