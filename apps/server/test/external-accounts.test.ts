import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@payments-sandbox/client";
import { signAsWallet, walletAddressOf, type OwnershipChain } from "@payments-sandbox/crypto";
import { BENEFICIARY_VERIFICATION_TABLE } from "@payments-sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  advanceClock,
  bankAccountInfo,
  createAccount,
  createBankAccount,
  createCustomer,
  eventsAbout,
} from "./money-helpers.js";

type AccountInfoCreate = Schemas["ExternalAccountCreateInfoOneOf"];
type OwnershipChallenge = Schemas["OwnershipChallenge"];

const person = { beneficiaryType: "INDIVIDUAL" as const, fullName: "Ada Lovelace" };

describe.each(databases)("external accounts on %s", (kind) => {
  let sandbox: TestSandbox;
  let customerId: string;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
    customerId = (await createCustomer(sandbox.client)).id;
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  async function add(accountInfo: AccountInfoCreate, currency: string, extra = {}) {
    return sandbox.client.POST("/customers/external-accounts", {
      body: { customerId, currency, accountInfo, ...extra },
    });
  }

  const expected = [
    ["102", "NOT_MATCHED"],
    ["103", "PARTIAL_MATCH"],
    ["104", "PENDING"],
    ["106", "UNSUPPORTED"],
    ["107", "CHECKED_BY_RECEIVING_FI"],
    ["789", "MATCHED"],
  ] as const;

  it("covers every row of the beneficiary table in this file", () => {
    const tested = [...expected.map(([s]) => s).filter((s) => s !== "789"), "105"];
    expect(BENEFICIARY_VERIFICATION_TABLE.rows.map((r) => r.match).sort()).toEqual(tested.sort());
  });

  for (const [suffix, status] of expected) {
    it(`gives an account number ending in ${suffix} the status ${status}`, async () => {
      const account = await createBankAccount(sandbox.client, customerId, suffix);
      expect(account).toMatchObject({ status: "ACTIVE", beneficiaryVerificationStatus: status });
      // Only a confirmed name is reported back.
      if (status === "MATCHED") {
        expect(account.beneficiaryVerifiedData).toEqual({ fullName: "Ada Lovelace" });
      } else {
        expect(account.beneficiaryVerifiedData).toBeUndefined();
      }
    });
  }

  it("rejects an account ending in 105 with 400 INVALID_BANK_ACCOUNT and creates nothing", async () => {
    const count = async () =>
      (
        await sandbox.client.GET("/customers/external-accounts", {
          params: { query: { customerId } },
        })
      ).data?.totalCount;
    const before = await count();
    const res = await add(bankAccountInfo("105"), "USD");
    expect(res.response.status).toBe(400);
    expect(res.error).toMatchObject({ status: 400, code: "INVALID_BANK_ACCOUNT" });
    expect(await count()).toBe(before);
  });

  it("answers what was sent, with the rails a bank account can be paid on", async () => {
    const sent = bankAccountInfo("456");
    const { data, response } = await add(sent, "USD", {
      platformAccountId: "ada-checking",
      ownershipType: "FIRST_PARTY",
    });
    expect(response.status).toBe(201);
    expect(data).toMatchObject({
      customerId,
      currency: "USD",
      status: "ACTIVE",
      platformAccountId: "ada-checking",
      ownershipType: "FIRST_PARTY",
      defaultUmaDepositAccount: false,
      accountInfo: { ...sent, paymentRails: ["ACH", "WIRE", "RTP", "FEDNOW"] },
    });
    expect(data?.id).toMatch(/^ExternalAccount:[0-9a-f-]{36}$/);
  });

  it("reads the suffix from every kind of identifier", async () => {
    const accounts: [AccountInfoCreate, string][] = [
      [bankAccountInfo("103", "EUR"), "EUR"],
      [bankAccountInfo("102", "MXN"), "MXN"],
      [
        {
          accountType: "BRL_ACCOUNT",
          pixKey: "ada.107@pix.com.br",
          pixKeyType: "EMAIL",
          taxId: "12345678901",
          beneficiary: person,
        },
        "BRL",
      ],
      [
        { accountType: "SPARK_WALLET", address: "sp1pgss9qmwe3a2v7u3s0tl5gdf7pz2c4u5e6a8hfq104" },
        "BTC",
      ],
      [{ accountType: "LIGHTNING", lightningAddress: "ada106@wallet.example" }, "BTC"],
      // Base58 has no 0, so a Solana address never carries a magic suffix.
      [
        { accountType: "SOLANA_WALLET", address: "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV" },
        "USDC",
      ],
    ];
    const statuses: Record<string, string> = {};
    for (const [info, currency] of accounts) {
      const { data, error } = await add(info, currency);
      expect(error).toBeUndefined();
      expect(data?.accountInfo).toMatchObject(info);
      statuses[info.accountType] = data!.beneficiaryVerificationStatus!;
    }
    expect(statuses).toEqual({
      EUR_ACCOUNT: "PARTIAL_MATCH",
      MXN_ACCOUNT: "NOT_MATCHED",
      BRL_ACCOUNT: "CHECKED_BY_RECEIVING_FI",
      SPARK_WALLET: "PENDING",
      LIGHTNING: "UNSUPPORTED",
      SOLANA_WALLET: "MATCHED",
    });
  });

  it("refuses a bank account in another currency than its type, and a missing customerId", async () => {
    const wrong = await add(bankAccountInfo("456"), "EUR");
    expect(wrong.error).toMatchObject({ status: 400, code: "INVALID_CURRENCY" });
    const orphan = await sandbox.client.POST("/customers/external-accounts", {
      body: { currency: "USD", accountInfo: bankAccountInfo("457") },
    });
    expect(orphan.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
  });

  it("refuses the same account twice, and a platformAccountId in use, with 409 CONFLICT", async () => {
    const owner = (await createCustomer(sandbox.client)).id;
    const first = await createBankAccount(sandbox.client, owner, "321");
    const again = await sandbox.client.POST("/customers/external-accounts", {
      body: { customerId: owner, currency: "USD", accountInfo: bankAccountInfo("321") },
    });
    expect(again.error).toMatchObject({
      status: 409,
      code: "CONFLICT",
      details: { externalAccountId: first.id },
    });
    const named = await sandbox.client.POST("/customers/external-accounts", {
      body: {
        customerId: owner,
        currency: "USD",
        platformAccountId: "dup",
        accountInfo: bankAccountInfo("322"),
      },
    });
    expect(named.response.status).toBe(201);
    const reused = await sandbox.client.POST("/customers/external-accounts", {
      body: {
        customerId: owner,
        currency: "USD",
        platformAccountId: "dup",
        accountInfo: bankAccountInfo("323"),
      },
    });
    expect(reused.error).toMatchObject({ status: 409, code: "CONFLICT" });
  });

  it("reads one back, lists with a cursor and filters, and hides them from other platforms", async () => {
    const owner = await createCustomer(sandbox.client, { lastName: "Hopper" });
    const made = [];
    for (const suffix of ["111", "222", "333"]) {
      made.push((await createBankAccount(sandbox.client, owner.id, suffix)).id);
    }
    const euros = await createBankAccount(sandbox.client, owner.id, "444", "EUR");
    const got = await sandbox.client.GET("/customers/external-accounts/{externalAccountId}", {
      params: { path: { externalAccountId: made[0]! } },
    });
    expect(got.data).toMatchObject({ id: made[0], customerId: owner.id, currency: "USD" });
    const query = { customerId: owner.id, currency: "USD", limit: 2 };
    const first = await sandbox.client.GET("/customers/external-accounts", {
      params: { query },
    });
    expect(first.data).toMatchObject({ hasMore: true, totalCount: 3 });
    const second = await sandbox.client.GET("/customers/external-accounts", {
      params: { query: { ...query, cursor: first.data!.nextCursor! } },
    });
    expect(second.data?.hasMore).toBe(false);
    const listed = [...first.data!.data, ...second.data!.data].map((a) => a.id);
    expect(listed.sort()).toEqual([...made].sort());
    expect(listed).not.toContain(euros.id);

    const other = await sandbox.otherPlatformClient();
    const hidden = await other.GET("/customers/external-accounts/{externalAccountId}", {
      params: { path: { externalAccountId: made[0]! } },
    });
    expect(hidden.error).toMatchObject({ status: 404, code: "REFERENCE_NOT_FOUND" });
    const theirList = await other.GET("/customers/external-accounts", {
      params: { query: { customerId: owner.id } },
    });
    expect(theirList.data).toMatchObject({ data: [], totalCount: 0 });
    const foreignCustomer = await other.POST("/customers/external-accounts", {
      body: { customerId: owner.id, currency: "USD", accountInfo: bankAccountInfo("555") },
    });
    expect(foreignCustomer.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
  });

  it("deletes an account: gone from reads and lists, and no money moves to it", async () => {
    const owner = (await createCustomer(sandbox.client)).id;
    const account = await createAccount(sandbox.client, owner, "USD", 5_000);
    const bank = await createBankAccount(sandbox.client, owner, "654");
    const path = { externalAccountId: bank.id };
    const deleted = await sandbox.client.DELETE(
      "/customers/external-accounts/{externalAccountId}",
      { params: { path } },
    );
    expect(deleted.response.status).toBe(204);
    const read = await sandbox.client.GET("/customers/external-accounts/{externalAccountId}", {
      params: { path },
    });
    expect(read.error).toMatchObject({ status: 404, code: "REFERENCE_NOT_FOUND" });
    const listed = await sandbox.client.GET("/customers/external-accounts", {
      params: { query: { customerId: owner } },
    });
    expect(listed.data?.data.map((a) => a.id)).not.toContain(bank.id);
    const transfer = await sandbox.client.POST("/transfer-out", {
      body: { source: { accountId: account.id }, destination: { accountId: bank.id }, amount: 100 },
    });
    expect(transfer.error).toMatchObject({ status: 404, code: "REFERENCE_NOT_FOUND" });
    const again = await sandbox.client.DELETE("/customers/external-accounts/{externalAccountId}", {
      params: { path },
    });
    expect(again.response.status).toBe(404);
    // The same account can be registered again once deleted.
    expect((await createBankAccount(sandbox.client, owner, "654")).id).not.toBe(bank.id);
  });

  it("keeps the platform's own accounts apart from its customers'", async () => {
    const created = await sandbox.client.POST("/platform/external-accounts", {
      body: {
        currency: "USD",
        platformAccountId: "treasury",
        accountInfo: {
          accountType: "USD_ACCOUNT",
          accountNumber: "000456789901",
          routingNumber: "021000021",
          beneficiary: { beneficiaryType: "BUSINESS", legalName: "Sandbox Platform Inc." },
        },
      },
    });
    expect(created.response.status).toBe(201);
    const platformAccount = created.data!;
    expect(platformAccount).not.toHaveProperty("customerId");
    expect(platformAccount).not.toHaveProperty("defaultUmaDepositAccount");
    const path = { externalAccountId: platformAccount.id };
    const read = await sandbox.client.GET("/platform/external-accounts/{externalAccountId}", {
      params: { path },
    });
    expect(read.data?.id).toBe(platformAccount.id);
    const asCustomers = await sandbox.client.GET(
      "/customers/external-accounts/{externalAccountId}",
      { params: { path } },
    );
    expect(asCustomers.response.status).toBe(404);
    const listed = await sandbox.client.GET("/platform/external-accounts", {
      params: { query: { currency: "USD" } },
    });
    expect(listed.data?.data.map((a) => a.id)).toEqual([platformAccount.id]);
    const customers = await sandbox.client.GET("/customers/external-accounts", {
      params: { query: { limit: 100 } },
    });
    expect(customers.data?.data.map((a) => a.id)).not.toContain(platformAccount.id);
    const removed = await sandbox.client.DELETE("/platform/external-accounts/{externalAccountId}", {
      params: { path },
    });
    expect(removed.response.status).toBe(204);
    const after = await sandbox.client.GET("/platform/external-accounts");
    expect(after.data).toMatchObject({ data: [], totalCount: 0 });
  });

  describe("ownership of the customer's own wallets", () => {
    const wallets: {
      chain: OwnershipChain;
      accountType: "ETHEREUM_WALLET" | "TRON_WALLET" | "SOLANA_WALLET";
      key: string;
    }[] = [
      {
        chain: "evm",
        accountType: "ETHEREUM_WALLET",
        key: "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
      },
      { chain: "tron", accountType: "TRON_WALLET", key: "02".repeat(32) },
      {
        chain: "solana",
        accountType: "SOLANA_WALLET",
        key: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
      },
    ];

    async function ownWallet(
      chain: OwnershipChain,
      accountType: (typeof wallets)[number]["accountType"],
      key: string,
    ) {
      const owner = (await createCustomer(sandbox.client)).id;
      const address = walletAddressOf(chain, key);
      const { data, error } = await sandbox.client.POST("/customers/external-accounts", {
        body: {
          customerId: owner,
          currency: "USDC",
          ownershipType: "FIRST_PARTY",
          accountInfo: { accountType, address },
        },
      });
      if (!data) throw new Error(JSON.stringify(error));
      return data;
    }

    function challenge(id: string, method: "WALLET_SIGNATURE" | "LIVENESS") {
      return sandbox.client.POST("/customers/external-accounts/{externalAccountId}/challenge", {
        params: { path: { externalAccountId: id } },
        body: { method },
      });
    }

    function verify(id: string, signature: string) {
      return sandbox.client.POST("/customers/external-accounts/{externalAccountId}/verify", {
        params: { path: { externalAccountId: id } },
        body: { signature },
      });
    }

    const messageOf = (answer: { data?: OwnershipChallenge }) => {
      const data = answer.data;
      if (data?.method !== "WALLET_SIGNATURE") throw new Error("no message to sign");
      return data.messageToSign;
    };

    for (const { chain, accountType, key } of wallets) {
      it(`activates a FIRST_PARTY ${accountType} on the wallet's own signature`, async () => {
        const wallet = await ownWallet(chain, accountType, key);
        expect(wallet.status).toBe("PENDING_OWNERSHIP_VERIFICATION");
        const issued = await challenge(wallet.id, "WALLET_SIGNATURE");
        expect(issued.response.status).toBe(201);
        expect(issued.data).toMatchObject({ method: "WALLET_SIGNATURE" });
        const done = await verify(wallet.id, signAsWallet(chain, key, messageOf(issued)));
        expect(done.response.status).toBe(200);
        expect(done.data?.status).toBe("ACTIVE");
        const events = await eventsAbout(sandbox.server.data, wallet.id);
        expect(events.map((e) => [e.type, e.data["status"]])).toEqual([
          ["EXTERNAL_ACCOUNT.STATUS_UPDATED", "ACTIVE"],
        ]);
        // Verified: there is nothing left to challenge.
        const more = await challenge(wallet.id, "WALLET_SIGNATURE");
        expect(more.error).toMatchObject({ status: 409, code: "INVALID_STATE_TRANSITION" });
      });
    }

    it("makes a wrong or late signature UNVERIFIED until a new challenge", async () => {
      const { chain, accountType, key } = wallets[0]!;
      const wallet = await ownWallet(chain, accountType, key);
      const noChallenge = await verify(wallet.id, signAsWallet(chain, key, "anything"));
      expect(noChallenge.error).toMatchObject({ status: 409, code: "INVALID_STATE_TRANSITION" });

      const issued = await challenge(wallet.id, "WALLET_SIGNATURE");
      const stranger = signAsWallet(chain, "11".repeat(32), messageOf(issued));
      const refused = await verify(wallet.id, stranger);
      expect(refused.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
      const read = await sandbox.client.GET("/customers/external-accounts/{externalAccountId}", {
        params: { path: { externalAccountId: wallet.id } },
      });
      expect(read.data?.status).toBe("UNVERIFIED");
      // The failed challenge is spent: the right signature now needs a new one.
      const spent = await verify(wallet.id, signAsWallet(chain, key, messageOf(issued)));
      expect(spent.error).toMatchObject({ status: 409 });

      const retry = await challenge(wallet.id, "WALLET_SIGNATURE");
      expect(
        (
          await sandbox.client.GET("/customers/external-accounts/{externalAccountId}", {
            params: { path: { externalAccountId: wallet.id } },
          })
        ).data?.status,
      ).toBe("PENDING_OWNERSHIP_VERIFICATION");
      await advanceClock(sandbox.client, 601);
      const late = await verify(wallet.id, signAsWallet(chain, key, messageOf(retry)));
      expect(late.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
      const events = await eventsAbout(sandbox.server.data, wallet.id);
      expect(events.map((e) => e.data["status"])).toEqual([
        "UNVERIFIED",
        "PENDING_OWNERSHIP_VERIFICATION",
        "UNVERIFIED",
      ]);
    });

    it("passes a LIVENESS check by itself 30 seconds later", async () => {
      const { chain, accountType, key } = wallets[2]!;
      const wallet = await ownWallet(chain, accountType, key);
      const issued = await challenge(wallet.id, "LIVENESS");
      expect(issued.response.status).toBe(201);
      expect(issued.data).toMatchObject({
        method: "LIVENESS",
        verificationLink: expect.stringMatching(/^http/),
      });
      // A liveness challenge is not answered with a signature.
      const signed = await verify(wallet.id, signAsWallet(chain, key, "x"));
      expect(signed.error).toMatchObject({ status: 409 });
      await advanceClock(sandbox.client, 31);
      const read = await sandbox.client.GET("/customers/external-accounts/{externalAccountId}", {
        params: { path: { externalAccountId: wallet.id } },
      });
      expect(read.data?.status).toBe("ACTIVE");
      const events = await eventsAbout(sandbox.server.data, wallet.id);
      expect(events.at(-1)).toMatchObject({
        type: "EXTERNAL_ACCOUNT.STATUS_UPDATED",
        data: { id: wallet.id, status: "ACTIVE" },
      });
    });

    it("needs no proof for other accounts, and refuses a challenge on them", async () => {
      const owner = (await createCustomer(sandbox.client)).id;
      const thirdParty = await sandbox.client.POST("/customers/external-accounts", {
        body: {
          customerId: owner,
          currency: "USDC",
          ownershipType: "THIRD_PARTY",
          accountInfo: {
            accountType: "ETHEREUM_WALLET",
            address: walletAddressOf("evm", "33".repeat(32)),
          },
        },
      });
      expect(thirdParty.data?.status).toBe("ACTIVE");
      const bank = await createBankAccount(sandbox.client, owner, "789");
      for (const id of [thirdParty.data!.id, bank.id]) {
        const refused = await challenge(id, "WALLET_SIGNATURE");
        expect(refused.error).toMatchObject({ status: 409, code: "INVALID_STATE_TRANSITION" });
      }
    });

    it("verifies the platform's own wallet the same way", async () => {
      const key = "44".repeat(32);
      const created = await sandbox.client.POST("/platform/external-accounts", {
        body: {
          currency: "USDC",
          ownershipType: "FIRST_PARTY",
          accountInfo: { accountType: "BASE_WALLET", address: walletAddressOf("evm", key) },
        },
      });
      expect(created.data?.status).toBe("PENDING_OWNERSHIP_VERIFICATION");
      const path = { externalAccountId: created.data!.id };
      const issued = await sandbox.client.POST(
        "/platform/external-accounts/{externalAccountId}/challenge",
        { params: { path }, body: { method: "WALLET_SIGNATURE" } },
      );
      const done = await sandbox.client.POST(
        "/platform/external-accounts/{externalAccountId}/verify",
        { params: { path }, body: { signature: signAsWallet("evm", key, messageOf(issued)) } },
      );
      expect(done.data?.status).toBe("ACTIVE");
      // A customer-scoped call does not reach it.
      const asCustomer = await challenge(created.data!.id, "WALLET_SIGNATURE");
      expect(asCustomer.response.status).toBe(404);
    });
  });
});
