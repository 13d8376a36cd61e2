import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook, type SandboxClient, type Schemas } from "@payments-sandbox/client";
import {
  STABLECOIN_FUNDING_SECONDS,
  STABLECOIN_FUNDING_WINDOW_SECONDS,
  STABLECOIN_PROCESSING_SECONDS,
} from "@payments-sandbox/sandbox-rules";
import { q } from "../src/db/query.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { advanceClock, balanceEvents, balanceOf, fund, platformAccount } from "./money-helpers.js";
import {
  burn,
  codeOf,
  expectLedgerIs,
  key,
  linked,
  mint,
  mintingDesk,
  operation,
  register,
} from "./support/stablecoins.js";
import { startReceiver, waitFor } from "./webhook-receiver.js";

// Stablecoin mints and burns. Money moves through the ledger where an internal
// account takes part (a mint funded by the platform's USD account, a mint into
// or a burn from the token's own account), once, and comes back when an
// operation fails. The refusals are in stablecoins-refusals.test.ts.

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

    it("mints from the platform's USD account into the token account and burns back to the bank, each once", async () => {
      const usdBefore = await balanceOf(client, usd);
      const headers = key();
      const body: Schemas["StablecoinMintRequest"] = {
        amount: "500000000", // 500.00 USD at 6 decimals
        fundingSource: { type: "GRID_INTERNAL_ACCOUNT", accountId: usd },
        destination: { accountId: tokenAccount },
        description: "First issuance",
      };
      const created = await mint(client, coin.id, body, headers);
      expect(created.response.status).toBe(201);
      expect(created.data).toEqual({
        id: expect.stringMatching(/^StablecoinOperation:[0-9a-f-]{36}$/),
        stablecoinId: coin.id,
        operationType: "MINT",
        status: "PROCESSING",
        amount: "500000000",
        provider: "BRALE",
        providerEnvironment: "SANDBOX",
        stablecoinProviderAccountId: coin.stablecoinProviderAccountId,
        source: { type: "GRID_INTERNAL_ACCOUNT", accountId: usd },
        destination: { accountId: tokenAccount },
        providerStatus: "processing",
        description: "First issuance",
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      // The cents leave the USD account at once, and a replay moves nothing more.
      expect(await balanceOf(client, usd)).toBe(usdBefore - 50_000);
      const replay = await mint(client, coin.id, body, headers);
      expect(replay.data).toEqual(created.data);
      expect(await balanceOf(client, usd)).toBe(usdBefore - 50_000);
      expect(await balanceOf(client, tokenAccount)).toBe(0);

      await advanceClock(client, STABLECOIN_PROCESSING_SECONDS);
      expect(await operation(client, created.data!.id)).toMatchObject({
        status: "COMPLETED",
        providerStatus: "complete",
      });
      expect(await balanceOf(client, tokenAccount)).toBe(500_000_000);
      const [event] = await balanceEvents(client, tokenAccount);
      expect(event?.balance.amount).toBe(500_000_000);

      const redeemed = await burn(client, coin.id, {
        amount: "200000000",
        source: { type: "GRID_INTERNAL_ACCOUNT", accountId: tokenAccount },
        destination: { type: "EXTERNAL_ACCOUNT", externalAccountId: bank, rail: "ACH_CREDIT" },
      });
      expect(redeemed.response.status).toBe(201);
      expect(redeemed.data).toMatchObject({
        operationType: "BURN",
        status: "PROCESSING",
        amount: "200000000",
        source: { type: "GRID_INTERNAL_ACCOUNT", accountId: tokenAccount },
        destination: { accountId: bank, rail: "ACH_CREDIT" },
        estimatedDelivery: {
          rail: "ACH_CREDIT",
          amount: "20000",
          currency: "USD",
          timing: expect.any(String),
        },
      });
      expect(await balanceOf(client, tokenAccount)).toBe(300_000_000);
      await advanceClock(client, STABLECOIN_PROCESSING_SECONDS);
      expect(await operation(client, redeemed.data!.id)).toMatchObject({ status: "COMPLETED" });
      // Advancing again moves nothing twice.
      await advanceClock(client, STABLECOIN_PROCESSING_SECONDS);

      await expectLedgerIs(sandbox, usd, usdBefore - 50_000);
      await expectLedgerIs(sandbox, tokenAccount, 300_000_000);
      const entries = await sandbox.server.data.all(
        q
          .selectFrom("LedgerEntry")
          .select(["accountId", "amount", "kind"])
          .where("reference", "in", [created.data!.id, redeemed.data!.id])
          .orderBy("createdAt")
          .orderBy("id"),
      );
      expect(entries).toEqual([
        { accountId: usd, amount: -50_000n, kind: "STABLECOIN_MINT_FUNDING" },
        { accountId: tokenAccount, amount: 500_000_000n, kind: "STABLECOIN_MINT" },
        { accountId: tokenAccount, amount: -200_000_000n, kind: "STABLECOIN_BURN" },
      ]);

      const listed = await client.GET("/stablecoins/{stablecoinId}/operations", {
        params: { path: { stablecoinId: coin.id }, query: { operationType: "BURN" } },
      });
      expect(listed.data?.data.map((o) => o.id)).toContain(redeemed.data!.id);
      expect(listed.data?.data.every((o) => o.operationType === "BURN")).toBe(true);
      // The file's first test also compiles each operation's checks on first use.
    }, 90_000);

    it("gives the money back when the provider fails the operation (cents ending 002)", async () => {
      const usdBefore = await balanceOf(client, usd);
      const failing = await mint(client, coin.id, {
        amount: "1000020000", // 100002 cents: 1,000.02 USD
        fundingSource: { type: "GRID_INTERNAL_ACCOUNT", accountId: usd },
        destination: { accountId: tokenAccount },
      });
      expect(failing.data?.status).toBe("PROCESSING");
      expect(await balanceOf(client, usd)).toBe(usdBefore - 100_002);
      const tokensBefore = await balanceOf(client, tokenAccount);
      await advanceClock(client, STABLECOIN_PROCESSING_SECONDS);
      expect(await operation(client, failing.data!.id)).toMatchObject({
        status: "FAILED",
        failureReason: "PROVIDER_TRANSFER_FAILED",
        providerStatus: "failed",
      });
      expect(await balanceOf(client, usd)).toBe(usdBefore);
      expect(await balanceOf(client, tokenAccount)).toBe(tokensBefore);

      await mint(client, coin.id, {
        amount: "100000000",
        fundingSource: { type: "GRID_INTERNAL_ACCOUNT", accountId: usd },
        destination: { accountId: tokenAccount },
      });
      await advanceClock(client, STABLECOIN_PROCESSING_SECONDS);
      const held = await balanceOf(client, tokenAccount);
      const failedBurn = await burn(client, coin.id, {
        amount: "10020000", // 1,002 cents
        source: { type: "GRID_INTERNAL_ACCOUNT", accountId: tokenAccount },
        destination: { type: "EXTERNAL_ACCOUNT", externalAccountId: bank, rail: "WIRE" },
      });
      expect(await balanceOf(client, tokenAccount)).toBe(held - 10_020_000);
      await advanceClock(client, STABLECOIN_PROCESSING_SECONDS);
      expect(await operation(client, failedBurn.data!.id)).toMatchObject({ status: "FAILED" });
      expect(await balanceOf(client, tokenAccount)).toBe(held);
      await expectLedgerIs(sandbox, usd, await balanceOf(client, usd));
      await expectLedgerIs(sandbox, tokenAccount, held);
      const reversals = await sandbox.server.data.all(
        q
          .selectFrom("LedgerEntry")
          .select(["kind", "amount"])
          .where("reference", "in", [failing.data!.id, failedBurn.data!.id])
          .orderBy("createdAt")
          .orderBy("id"),
      );
      expect(reversals).toEqual([
        { kind: "STABLECOIN_MINT_FUNDING", amount: -100_002n },
        { kind: "STABLECOIN_MINT_FUNDING_REVERSAL", amount: 100_002n },
        { kind: "STABLECOIN_BURN", amount: -10_020_000n },
        { kind: "STABLECOIN_BURN_REVERSAL", amount: 10_020_000n },
      ]);
    });

    it("waits for wire funding, then processes; never funded (003) it expires", async () => {
      const tokensBefore = await balanceOf(client, tokenAccount);
      const wired = await mint(client, coin.id, {
        amount: "250000000",
        fundingSource: { type: "WIRE" },
        destination: { accountId: tokenAccount },
      });
      expect(wired.data).toMatchObject({
        status: "PENDING_FUNDING",
        source: { type: "WIRE" },
        fundingInstructions: {
          rail: "WIRE",
          bankName: expect.any(String),
          routingNumber: expect.any(String),
          accountNumber: expect.stringMatching(/^[0-9]{10}$/),
          amount: "25000",
          currency: "USD",
        },
        providerStatus: "awaiting_funds",
      });
      const created = Date.parse(wired.data!.createdAt);
      expect(Date.parse(wired.data!.expiresAt!) - created).toBe(
        STABLECOIN_FUNDING_WINDOW_SECONDS * 1000,
      );
      await advanceClock(client, STABLECOIN_FUNDING_SECONDS);
      expect((await operation(client, wired.data!.id)).status).toBe("PROCESSING");
      expect(await balanceOf(client, tokenAccount)).toBe(tokensBefore);
      await advanceClock(client, STABLECOIN_PROCESSING_SECONDS);
      expect((await operation(client, wired.data!.id)).status).toBe("COMPLETED");
      expect(await balanceOf(client, tokenAccount)).toBe(tokensBefore + 250_000_000);

      const unfunded = await mint(client, coin.id, {
        amount: "250030000", // 25,003 cents
        fundingSource: { type: "WIRE" },
        destination: { accountId: spark },
      });
      expect(unfunded.data?.status).toBe("PENDING_FUNDING");
      await advanceClock(client, STABLECOIN_FUNDING_SECONDS + STABLECOIN_PROCESSING_SECONDS);
      expect((await operation(client, unfunded.data!.id)).status).toBe("PENDING_FUNDING");
      await advanceClock(client, STABLECOIN_FUNDING_WINDOW_SECONDS);
      expect(await operation(client, unfunded.data!.id)).toMatchObject({
        status: "EXPIRED",
        providerStatus: "expired",
      });
      expect(await balanceOf(client, tokenAccount)).toBe(tokensBefore + 250_000_000);
    });

    it("funds by ACH or the provider balance into a Spark wallet, and burns tokens sent from outside", async () => {
      const ach = await mint(client, coin.id, {
        amount: "10000000",
        fundingSource: { type: "SAME_DAY_ACH_DEBIT", externalAccountId: bank },
        destination: { accountId: spark },
      });
      expect(ach.data).toMatchObject({
        status: "PROCESSING",
        source: { type: "SAME_DAY_ACH_DEBIT", externalAccountId: bank },
        destination: { accountId: spark },
      });
      const provider = await mint(client, coin.id, {
        amount: "10000000",
        fundingSource: {
          type: "PROVIDER_INTERNAL_BALANCE",
          sourceTokenIdentifier: "USDC",
          cryptoNetwork: "SOLANA",
        },
        destination: { accountId: spark },
      });
      expect(provider.data?.source).toEqual({
        type: "PROVIDER_INTERNAL_BALANCE",
        sourceTokenIdentifier: "USDC",
        cryptoNetwork: "SOLANA",
      });
      const outside = await burn(client, coin.id, {
        amount: "10000000",
        source: { type: "EXTERNAL_ACCOUNT" },
        destination: { type: "EXTERNAL_ACCOUNT", externalAccountId: bank, rail: "RTP_CREDIT" },
      });
      expect(outside.data).toMatchObject({
        status: "PENDING_FUNDING",
        source: { type: "EXTERNAL_ACCOUNT" },
        fundingInstructions: {
          rail: "SPARK",
          network: "SPARK",
          address: expect.stringMatching(/^sparkrt1/),
          valueType: "SBXD",
        },
        expiresAt: expect.any(String),
      });
      await advanceClock(client, STABLECOIN_FUNDING_SECONDS + STABLECOIN_PROCESSING_SECONDS);
      for (const id of [ach.data!.id, provider.data!.id, outside.data!.id]) {
        expect((await operation(client, id)).status).toBe("COMPLETED");
      }
    });

    it("pages a stablecoin's operations newest first", async () => {
      const all = await client.GET("/stablecoins/{stablecoinId}/operations", {
        params: { path: { stablecoinId: coin.id }, query: { limit: 100 } },
      });
      const ids = all.data!.data.map((o) => o.id);
      expect(ids.length).toBe(all.data!.totalCount);
      expect(ids.length).toBeGreaterThan(3);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.GET("/stablecoins/{stablecoinId}/operations", {
          params: {
            path: { stablecoinId: coin.id },
            query: { limit: 3, ...(cursor ? { cursor } : {}) },
          },
        });
        seen.push(...page.data!.data.map((o) => o.id));
        cursor = page.data!.nextCursor;
      } while (cursor);
      expect(seen).toEqual(ids);
      const mints = await client.GET("/stablecoins/{stablecoinId}/operations", {
        params: { path: { stablecoinId: coin.id }, query: { operationType: "MINT", limit: 100 } },
      });
      expect(mints.data!.data.every((o) => o.operationType === "MINT")).toBe(true);
      const badCursor = await client.GET("/stablecoins/{stablecoinId}/operations", {
        params: { path: { stablecoinId: coin.id }, query: { cursor: "nope" } },
      });
      expect(badCursor.response.status).toBe(400);
    });

    it("reports the token account's balance changes with signed INTERNAL_ACCOUNT.BALANCE_UPDATED webhooks", async () => {
      const receiver = await startReceiver();
      try {
        const own = await sandbox.otherPlatformClient();
        await own.PATCH("/config", { body: { webhookEndpoint: receiver.url } });
        await linked(own, "brale_client_hooks");
        const token = (await register(own, "HOOK")).data!;
        const funding = (await platformAccount(own, "USD")).id;
        const holder = (
          await own.GET("/platform/internal-accounts", { params: { query: { currency: "HOOK" } } })
        ).data!.data[0]!.id;
        await fund(own, funding, 10_000);
        const minted = await mint(own, token.id, {
          amount: "10000000",
          fundingSource: { type: "GRID_INTERNAL_ACCOUNT", accountId: funding },
          destination: { accountId: holder },
        });
        await advanceClock(own, STABLECOIN_PROCESSING_SECONDS);
        expect((await operation(own, minted.data!.id)).status).toBe("COMPLETED");

        const { data: events } = await own.GET("/sandbox/webhooks/events", {
          params: { query: { type: "INTERNAL_ACCOUNT.BALANCE_UPDATED", objectId: holder } },
        });
        expect(events?.data).toHaveLength(1);
        const event = events!.data[0]!;
        expect(event.payload.data).toMatchObject({ id: holder, balance: { amount: 10_000_000 } });
        await waitFor("the mint's balance webhook", () => receiver.delivered().includes(event.id));
        const delivered = receiver.requests.find((request) => request.eventId === event.id)!;
        const pem = (await own.GET("/sandbox/keys")).data!.webhookPublicKey;
        expect(verifyWebhook(delivered.rawBody, delivered.signature, pem)).toBe(true);
        expect(JSON.parse(delivered.rawBody)).toEqual(event.payload);
      } finally {
        await receiver.close();
      }
    });

    it("keeps another platform out of the stablecoin, its operations and its accounts", async () => {
      const other = await sandbox.otherPlatformClient();
      const [anyOperation] = (
        await client.GET("/stablecoins/{stablecoinId}/operations", {
          params: { path: { stablecoinId: coin.id } },
        })
      ).data!.data;
      const read = await other.GET("/stablecoin-operations/{stablecoinOperationId}", {
        params: { path: { stablecoinOperationId: anyOperation!.id } },
      });
      expect(read.response.status).toBe(404);
      const list = await other.GET("/stablecoins/{stablecoinId}/operations", {
        params: { path: { stablecoinId: coin.id } },
      });
      expect(list.response.status).toBe(404);
      const minted = await mint(other, coin.id, {
        amount: "10000",
        fundingSource: { type: "WIRE" },
        destination: { accountId: spark },
      });
      expect(minted.response.status).toBe(404);

      // Its own stablecoin cannot spend this platform's account.
      await linked(other, "brale_client_other");
      const own = (await register(other, "OTHR")).data!;
      const borrowed = await mint(other, own.id, {
        amount: "10000",
        fundingSource: { type: "GRID_INTERNAL_ACCOUNT", accountId: usd },
        destination: { accountId: spark },
      });
      expect(borrowed.response.status).toBe(404);
      expect(codeOf(borrowed.error)).toBe("REFERENCE_NOT_FOUND");
    });
  });
});
