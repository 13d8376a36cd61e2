// Steps the agent tests share: creating and connecting an agent, setting up
// a customer it acts for, moving money as it, and the platform deciding its
// actions. Each describe.each block starts its own sandbox, so the steps read
// it through a getter rather than holding one.
import { expect } from "vitest";
import { createAgentClient, type SandboxClient, type Schemas } from "@payments-sandbox/client";
import { q } from "../../src/db/query.js";
import type { TestSandbox } from "../harness.js";
import { createAccount, createBankAccount, createCustomer } from "../money-helpers.js";
import { policy } from "./agent-policy.js";

type AgentPolicy = Schemas["AgentPolicy"];
type AgentAction = Schemas["AgentAction"];

export function agentSteps(current: () => TestSandbox) {
  /** Agent software before it has its token: no credentials at all. */
  const anonymous = () => createAgentClient({ baseUrl: current().server.baseUrl });

  async function createAgent(
    customerId: string,
    agentPolicy: AgentPolicy = policy(),
    name = "Invoice payer",
  ) {
    const { data, error, response } = await current().client.POST("/agents", {
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
    return createAgentClient({ baseUrl: current().server.baseUrl, accessToken: data.accessToken });
  }

  /** A customer with a funded USD account and a bank account, and a connected agent acting for them. */
  async function agentSetup(
    options: { balance?: number; bankSuffix?: string; policy?: AgentPolicy } = {},
  ) {
    const sandbox = current();
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
    return { customer, account, bank, created, agentId: created.agent.id, agent };
  }

  const approveAction = (action: AgentAction) =>
    current().client.POST("/agents/{agentId}/actions/{actionId}/approve", {
      params: { path: { agentId: action.agentId, actionId: action.id } },
    });
  const rejectAction = (action: AgentAction, reason?: string) =>
    current().client.POST("/agents/{agentId}/actions/{actionId}/reject", {
      params: { path: { agentId: action.agentId, actionId: action.id } },
      body: reason === undefined ? {} : { reason },
    });

  /** The transaction an action holds, as the platform finds it among its waiting ones. */
  async function heldTransactionOf(action: AgentAction): Promise<string> {
    const row = await current().server.data.one(
      q.selectFrom("AgentAction").select("transactionId").where("id", "=", action.id),
    );
    return row!.transactionId;
  }

  function transferOut(agent: SandboxClient, from: string, to: string, amount: number) {
    return agent.POST("/agents/me/transfer-out", {
      body: { source: { accountId: from }, destination: { accountId: to }, amount },
    });
  }

  return {
    anonymous,
    createAgent,
    connect,
    agentSetup,
    approveAction,
    rejectAction,
    heldTransactionOf,
    transferOut,
  };
}
