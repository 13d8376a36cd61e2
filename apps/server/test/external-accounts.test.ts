import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@sandbox/client";
import { BENEFICIARY_VERIFICATION_TABLE } from "@sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { createBankAccount, createCustomer } from "./money-helpers.js";

type ExternalAccountCreate = Schemas["ExternalAccountCreate"];

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
      expect(account.beneficiaryVerificationStatus).toBe(status);
    });
  }

  it("rejects an account ending in 105 with 400 INVALID_BANK_ACCOUNT and creates nothing", async () => {
    const before = await sandbox.client.GET("/external-accounts", {
      params: { query: { customerId, limit: 100 } },
    });
    const res = await sandbox.client.POST("/external-accounts", {
      body: {
        customerId,
        currency: "USD",
        accountType: "US_ACCOUNT",
        beneficiaryName: "Ada Lovelace",
        accountInfo: { accountNumber: "000987654105", routingNumber: "021000021" },
      },
    });
    expect(res.response.status).toBe(400);
    expect(res.error).toMatchObject({ status: 400, code: "INVALID_BANK_ACCOUNT" });
    const after = await sandbox.client.GET("/external-accounts", {
      params: { query: { customerId, limit: 100 } },
    });
    expect(after.data?.data.length).toBe(before.data?.data.length);
  });

  it("reads the suffix from every kind of identifier", async () => {
    const bodies: ExternalAccountCreate[] = [
      {
        customerId,
        currency: "EUR",
        accountType: "IBAN",
        beneficiaryName: "Ada Lovelace",
        accountInfo: { iban: "DE89370400440532013103", bic: "COBADEFFXXX" },
      },
      {
        customerId,
        currency: "MXN",
        accountType: "CLABE",
        beneficiaryName: "Lucía Hernández",
        accountInfo: { clabe: "032180000118359102" },
      },
      {
        customerId,
        currency: "BTC",
        accountType: "SPARK_WALLET",
        beneficiaryName: "Ada Lovelace",
        accountInfo: { address: "sp1pgss9qmwe3a2v7u3s0tl5gdf7pz2c4u5e6a8hfq104" },
      },
      {
        customerId,
        currency: "BTC",
        accountType: "LIGHTNING",
        beneficiaryName: "Ada Lovelace",
        accountInfo: { address: "ada106@wallet.example" },
      },
      {
        customerId,
        currency: "USD",
        accountType: "UMA",
        beneficiaryName: "Ada Lovelace",
        accountInfo: { address: "$ada.107@uma.example" },
      },
      {
        customerId,
        currency: "USD",
        accountType: "SOLANA_WALLET",
        beneficiaryName: "Ada Lovelace",
        accountInfo: { address: "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV" },
      },
    ];
    const statuses: Record<string, string> = {};
    for (const body of bodies) {
      const { data, error } = await sandbox.client.POST("/external-accounts", { body });
      expect(error).toBeUndefined();
      expect(data).toMatchObject({ accountType: body.accountType, accountInfo: body.accountInfo });
      statuses[body.accountType] = data!.beneficiaryVerificationStatus;
    }
    expect(statuses).toEqual({
      IBAN: "PARTIAL_MATCH",
      CLABE: "NOT_MATCHED",
      SPARK_WALLET: "PENDING",
      LIGHTNING: "UNSUPPORTED",
      UMA: "CHECKED_BY_RECEIVING_FI",
      // Base58 has no 0, so a Solana address never carries a magic suffix.
      SOLANA_WALLET: "MATCHED",
    });
  });

  it("refuses a malformed UMA address with 400 INVALID_UMA_ADDRESS", async () => {
    const res = await sandbox.client.POST("/external-accounts", {
      body: {
        customerId,
        currency: "USD",
        accountType: "UMA",
        beneficiaryName: "Ada Lovelace",
        accountInfo: { address: "ada@uma.example" },
      },
    });
    expect(res.error).toMatchObject({ status: 400, code: "INVALID_UMA_ADDRESS" });
  });

  it("reads one back, lists a customer's accounts with a cursor, and hides them from other platforms", async () => {
    const owner = await createCustomer(sandbox.client, { lastName: "Hopper" });
    const made = [];
    for (const suffix of ["111", "222", "333"]) {
      made.push((await createBankAccount(sandbox.client, owner.id, suffix)).id);
    }
    const got = await sandbox.client.GET("/external-accounts/{id}", {
      params: { path: { id: made[0]! } },
    });
    expect(got.data).toMatchObject({ id: made[0], customerId: owner.id, currency: "USD" });
    const first = await sandbox.client.GET("/external-accounts", {
      params: { query: { customerId: owner.id, limit: 2 } },
    });
    expect(first.data?.hasMore).toBe(true);
    const second = await sandbox.client.GET("/external-accounts", {
      params: { query: { customerId: owner.id, limit: 2, cursor: first.data!.nextCursor! } },
    });
    expect(second.data?.hasMore).toBe(false);
    const listed = [...first.data!.data, ...second.data!.data].map((a) => a.id);
    expect(listed.sort()).toEqual([...made].sort());

    const other = await sandbox.otherPlatformClient();
    const hidden = await other.GET("/external-accounts/{id}", {
      params: { path: { id: made[0]! } },
    });
    expect(hidden.error).toMatchObject({ status: 404, code: "REFERENCE_NOT_FOUND" });
    const foreignCustomer = await other.POST("/external-accounts", {
      body: {
        customerId: owner.id,
        currency: "USD",
        accountType: "US_ACCOUNT",
        beneficiaryName: "Grace Hopper",
        accountInfo: { accountNumber: "000123456789", routingNumber: "021000021" },
      },
    });
    expect(foreignCustomer.error).toMatchObject({ status: 404, code: "USER_NOT_FOUND" });
  });
});
