import { SANDBOX_SCA_CODE } from "@payments-sandbox/sandbox-rules";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  bankAccountInfo,
  createAccount,
  createBankAccount,
  createCustomer,
} from "./money-helpers.js";
import { policy } from "./support/agent-policy.js";
import { agentSteps } from "./support/agents.js";

// What an agent sees and manages of its customer's accounts, and of its own quotes.

describe.each(databases)("managing agents on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const { createAgent, connect, agentSetup } = agentSteps(() => sandbox);

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
      // The file's first test also compiles each operation's checks on first use.
    }, 90_000);

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
});
