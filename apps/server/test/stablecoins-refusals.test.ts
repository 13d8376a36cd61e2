import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type SandboxClient, type Schemas } from "@payments-sandbox/client";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { balanceOf } from "./money-helpers.js";
import { burn, codeOf, mint, mintingDesk } from "./support/stablecoins.js";

// Stablecoin mints and burns that cannot be done: refused, and nothing written.

type Stablecoin = Schemas["Stablecoin"];

describe.each(databases)("stablecoins on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  describe("mints and burns", () => {
    let client: SandboxClient;
    let coin: Stablecoin;
    let usd: string;
    let tokenAccount: string;
    let bank: string;
    let spark: string;

    beforeAll(async () => {
      ({ client, coin, usd, tokenAccount, bank, spark } = await mintingDesk(sandbox.client));
    });

    it("refuses what cannot be done, writing nothing", async () => {
      const count = async () =>
        (
          await client.GET("/stablecoins/{stablecoinId}/operations", {
            params: { path: { stablecoinId: coin.id } },
          })
        ).data!.totalCount;
      const before = await count();
      const usdBefore = await balanceOf(client, usd);
      const fromUsd = { type: "GRID_INTERNAL_ACCOUNT" as const, accountId: usd };
      const toTokens = { accountId: tokenAccount };

      const down = await mint(client, coin.id, {
        amount: "25030000", // 2,503 cents
        fundingSource: fromUsd,
        destination: toTokens,
      });
      expect(down.response.status).toBe(503);
      expect(down.error).toMatchObject({ status: 503, code: "SERVICE_UNAVAILABLE" });
      const downBurn = await burn(client, coin.id, {
        amount: "25030000",
        source: { type: "PROVIDER_INTERNAL_BALANCE" },
        destination: { type: "EXTERNAL_ACCOUNT", externalAccountId: bank, rail: "WIRE" },
      });
      expect(downBurn.response.status).toBe(503);

      const tooMuch = await mint(client, coin.id, {
        amount: `${(usdBefore + 1) * 10_000}`,
        fundingSource: fromUsd,
        destination: toTokens,
      });
      expect(tooMuch.response.status).toBe(400);
      expect(tooMuch.error).toMatchObject({
        status: 400,
        code: "INVALID_INPUT",
        reason: "Insufficient balance",
      });
      const overBurn = await burn(client, coin.id, {
        amount: `${(await balanceOf(client, tokenAccount)) + 10_000}`,
        source: { type: "GRID_INTERNAL_ACCOUNT", accountId: tokenAccount },
        destination: { type: "EXTERNAL_ACCOUNT", externalAccountId: bank, rail: "WIRE" },
      });
      expect(overBurn.error).toMatchObject({
        status: 400,
        code: "INVALID_INPUT",
        reason: "Insufficient balance",
      });

      for (const amount of ["1234", "0", "10005000"]) {
        const refused = await mint(client, coin.id, {
          amount,
          fundingSource: fromUsd,
          destination: toTokens,
        });
        expect(refused.response.status).toBe(400);
        expect(codeOf(refused.error)).toBe("INVALID_AMOUNT");
      }
      const huge = await mint(client, coin.id, {
        amount: "90071992547409910000",
        fundingSource: fromUsd,
        destination: toTokens,
      });
      expect(codeOf(huge.error)).toBe("AMOUNT_OUT_OF_RANGE");

      const wrongFunding = await mint(client, coin.id, {
        amount: "10000",
        fundingSource: { type: "GRID_INTERNAL_ACCOUNT", accountId: tokenAccount },
        destination: toTokens,
      });
      expect(codeOf(wrongFunding.error)).toBe("INVALID_CURRENCY");
      const wrongDestination = await mint(client, coin.id, {
        amount: "10000",
        fundingSource: fromUsd,
        destination: { accountId: usd },
      });
      expect(codeOf(wrongDestination.error)).toBe("INVALID_CURRENCY");
      const walletAsBank = await mint(client, coin.id, {
        amount: "10000",
        fundingSource: { type: "ACH_DEBIT", externalAccountId: spark },
        destination: toTokens,
      });
      expect(codeOf(walletAsBank.error)).toBe("INVALID_CURRENCY");
      const bankAsWallet = await mint(client, coin.id, {
        amount: "10000",
        fundingSource: fromUsd,
        destination: { accountId: bank },
      });
      expect(codeOf(bankAsWallet.error)).toBe("INVALID_INPUT");
      const notAnAccount = await mint(client, coin.id, {
        amount: "10000",
        fundingSource: fromUsd,
        destination: { accountId: "Customer:1" },
      });
      expect(codeOf(notAnAccount.error)).toBe("INVALID_INPUT");
      const burnFromUsd = await burn(client, coin.id, {
        amount: "10000",
        source: { type: "GRID_INTERNAL_ACCOUNT", accountId: usd },
        destination: { type: "EXTERNAL_ACCOUNT", externalAccountId: bank, rail: "WIRE" },
      });
      expect(codeOf(burnFromUsd.error)).toBe("INVALID_CURRENCY");
      const unknownAccount = await mint(client, coin.id, {
        amount: "10000",
        fundingSource: {
          type: "GRID_INTERNAL_ACCOUNT",
          accountId: `InternalAccount:${randomUUID()}`,
        },
        destination: toTokens,
      });
      expect(unknownAccount.response.status).toBe(404);
      expect(codeOf(unknownAccount.error)).toBe("REFERENCE_NOT_FOUND");
      const unknownCoin = await mint(client, `Stablecoin:${randomUUID()}`, {
        amount: "10000",
        fundingSource: fromUsd,
        destination: toTokens,
      });
      expect(unknownCoin.response.status).toBe(404);
      const unknownOperation = await client.GET("/stablecoin-operations/{stablecoinOperationId}", {
        params: { path: { stablecoinOperationId: `StablecoinOperation:${randomUUID()}` } },
      });
      expect(codeOf(unknownOperation.error)).toBe("REFERENCE_NOT_FOUND");
      const unknownList = await client.GET("/stablecoins/{stablecoinId}/operations", {
        params: { path: { stablecoinId: `Stablecoin:${randomUUID()}` } },
      });
      expect(unknownList.response.status).toBe(404);

      expect(await count()).toBe(before);
      expect(await balanceOf(client, usd)).toBe(usdBefore);
      // The file's first test also compiles each operation's checks on first use.
    }, 90_000);
  });
});
