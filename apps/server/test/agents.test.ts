import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAgentClient, type SandboxClient, type Schemas } from "@payments-sandbox/client";
import { q } from "../src/db/query.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  advanceClock,
  balanceOf,
  createAccount,
  createBankAccount,
  createCustomer,
  eventsAbout,
  transactionOf,
} from "./money-helpers.js";
import { policy } from "./support/agent-policy.js";

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

  /** Agent software before it has its token: no credentials at all. */
  const anonymous = () => createAgentClient({ baseUrl: sandbox.server.baseUrl });

  async function createAgent(customerId: string, agentPolicy: AgentPolicy, name = "Invoice payer") {
    const { data, error, response } = await sandbox.client.POST("/agents", {
      body: { name, customerId, policy: agentPolicy },
    });
    if (!data) throw new Error(`agent not created: ${JSON.stringify(error)}`);
    expect(response.status).toBe(201);
    return data;
  }

  /** Redeems the code as the agent software does, and returns its typed client. */
  async function connect(code: string): Promise<SandboxClient> {
    const { data, error } = await anonymous().POST("/agents/device-codes/{code}/redeem", {
      params: { path: { code } },
    });
    if (!data) throw new Error(`device code not redeemed: ${JSON.stringify(error)}`);
    return createAgentClient({ baseUrl: sandbox.server.baseUrl, accessToken: data.accessToken });
  }

  /** A customer with a funded USD account and a bank account, and a connected agent acting for them. */
  async function agentSetup(
    options: { balance?: number; bankSuffix?: string; policy?: AgentPolicy } = {},
  ) {
    const customer = await createCustomer(sandbox.client);
    const account = await createAccount(
      sandbox.client,
      customer.id,
      "USD",
      options.balance ?? 200_000,
    );
    const bank = await createBankAccount(sandbox.client, customer.id, options.bankSuffix ?? "789");
    const created = await createAgent(customer.id, options.policy ?? policy());
    const agent = await connect(created.deviceCode.code);
    return { customer, account, bank, created, agent };
  }

  type AgentAction = Schemas["AgentAction"];
  const approveAction = (action: AgentAction) =>
    sandbox.client.POST("/agents/{agentId}/actions/{actionId}/approve", {
      params: { path: { agentId: action.agentId, actionId: action.id } },
    });
  const rejectAction = (action: AgentAction, reason?: string) =>
    sandbox.client.POST("/agents/{agentId}/actions/{actionId}/reject", {
      params: { path: { agentId: action.agentId, actionId: action.id } },
      body: reason === undefined ? {} : { reason },
    });

  /** The transaction an action holds, as the platform finds it among its waiting ones. */
  async function heldTransactionOf(action: AgentAction): Promise<string> {
    const row = await sandbox.server.data.one(
      q.selectFrom("AgentAction").select("transactionId").where("id", "=", action.id),
    );
    return row!.transactionId;
  }

  function transferOut(agent: SandboxClient, from: string, to: string, amount: number) {
    return agent.POST("/agents/me/transfer-out", {
      body: { source: { accountId: from }, destination: { accountId: to }, amount },
    });
  }

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
    });

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
    });

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
