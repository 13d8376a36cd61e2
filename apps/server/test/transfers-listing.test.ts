import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  createAccount,
  createBankAccount,
  createCustomer,
  transactionOf,
} from "./money-helpers.js";
import { push } from "./support/transfers.js";

// Listing and reading the transactions that transfers make.

describe.each(databases)("transfers on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("lists transactions with filters, a cursor both ways and a total, and reads one", async () => {
    const other = await createCustomer(sandbox.client, { lastName: "Hopper" });
    const account = await createAccount(sandbox.client, other.id, "USD", 10_000);
    const bank = await createBankAccount(sandbox.client, other.id, "789");
    const made: string[] = [];
    for (const amount of [100, 200, 300]) {
      const { data } = await sandbox.client.POST("/transfer-out", {
        body: push(account.id, bank.id, amount),
      });
      made.push(data!.id);
    }
    for (const sortOrder of ["desc", "asc"] as const) {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (;;) {
        const { data } = await sandbox.client.GET("/transactions", {
          params: {
            query: {
              customerId: other.id,
              type: "OUTGOING",
              limit: 2,
              sortOrder,
              ...(cursor ? { cursor } : {}),
            },
          },
        });
        expect(data?.totalCount).toBe(3);
        seen.push(...data!.data.map((t) => t.id));
        if (!data!.hasMore) break;
        cursor = data!.nextCursor;
      }
      expect(seen).toEqual(sortOrder === "asc" ? made : [...made].reverse());
    }
    // The sandbox top-up is an incoming transaction of its own.
    const funding = await sandbox.client.GET("/transactions", {
      params: { query: { receiverAccountIdentifier: account.id, type: "INCOMING" } },
    });
    expect(funding.data?.data).toHaveLength(1);
    expect(funding.data?.data[0]).toMatchObject({
      type: "INCOMING",
      receivedAmount: { amount: 10_000 },
      status: "COMPLETED",
    });
    expect(funding.data?.data[0]).not.toHaveProperty("source");
    const sent = await sandbox.client.GET("/transactions", {
      params: { query: { senderAccountIdentifier: account.id } },
    });
    expect(sent.data?.data.map((t) => t.id).sort()).toEqual([...made].sort());
    const toBank = await sandbox.client.GET("/transactions", {
      params: { query: { receiverAccountIdentifier: bank.id } },
    });
    expect(toBank.data?.totalCount).toBe(3);
    const { data: customer } = await sandbox.client.GET("/customers/{customerId}", {
      params: { path: { customerId: other.id } },
    });
    const byPlatformId = await sandbox.client.GET("/transactions", {
      params: { query: { platformCustomerId: customer!.platformCustomerId } },
    });
    expect(byPlatformId.data?.totalCount).toBe(4);
    const failed = await sandbox.client.GET("/transactions", {
      params: { query: { customerId: other.id, status: "FAILED" } },
    });
    expect(failed.data?.data).toEqual([]);
    const future = await sandbox.client.GET("/transactions", {
      params: { query: { customerId: other.id, startDate: "2999-01-01T00:00:00Z" } },
    });
    expect(future.data?.totalCount).toBe(0);
    const got = await transactionOf(sandbox.client, made[0]!);
    expect(got).toMatchObject({ id: made[0], sentAmount: { amount: 100 } });

    const foreign = await sandbox.otherPlatformClient();
    const hidden = await foreign.GET("/transactions/{transactionId}", {
      params: { path: { transactionId: made[0]! } },
    });
    expect(hidden.response.status).toBe(404);
    expect(hidden.error).toMatchObject({ code: "TRANSACTION_NOT_FOUND" });
    for (const path of [
      "/transactions/{transactionId}/cancel",
      "/transactions/{transactionId}/confirm",
      "/transactions/{transactionId}/approve",
    ] as const) {
      const res = await foreign.POST(path, { params: { path: { transactionId: made[0]! } } });
      expect(res.response.status).toBe(404);
    }
    const foreignList = await foreign.GET("/transactions", {});
    expect(foreignList.data?.data).toEqual([]);
    // The file's first test also compiles each operation's checks on first use.
  }, 90_000);

  it("lists the platform's own transactions under the platform's id", async () => {
    const { data: platformAccounts } = await sandbox.client.GET("/platform/internal-accounts", {
      params: { query: { currency: "USD" } },
    });
    const account = platformAccounts!.data[0]!;
    await sandbox.client.POST("/sandbox/internal-accounts/{accountId}/fund", {
      params: { path: { accountId: account.id } },
      body: { amount: 321 },
    });
    const { data: config } = await sandbox.client.GET("/config", {});
    const { data } = await sandbox.client.GET("/transactions", {
      params: { query: { customerId: config!.id, accountIdentifier: account.id } },
    });
    expect(data?.data[0]).toMatchObject({
      customerId: config!.id,
      platformCustomerId: config!.id,
      receivedAmount: { amount: 321 },
    });
  });
});
