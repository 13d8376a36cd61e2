import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook, type SandboxClient, type Schemas } from "@payments-sandbox/client";
import {
  STABLECOIN_FUNDING_SECONDS,
  STABLECOIN_FUNDING_WINDOW_SECONDS,
  STABLECOIN_PROCESSING_SECONDS,
} from "@payments-sandbox/sandbox-rules";
import { q } from "../src/db/query.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  advanceClock,
  balanceEvents,
  balanceOf,
  bankAccountInfo,
  fund,
  platformAccount,
  rememberAccount,
} from "./money-helpers.js";
import { startReceiver, waitFor } from "./webhook-receiver.js";

// Stablecoins: provider account links, registered tokens, and their mints and
// burns. Money moves through the ledger where an internal account takes part
// (a mint funded by the platform's USD account, a mint into or a burn from the
// token's own account), once, and comes back when an operation fails.

type Operation = Schemas["StablecoinOperation"];
type Stablecoin = Schemas["Stablecoin"];
type ErrorBody = { status?: number; code?: string; details?: Record<string, unknown> };

const key = () => ({ "Idempotency-Key": randomUUID() });

function link(client: SandboxClient, apiClientId: string, providerAccountId?: string) {
  return client.POST("/stablecoin-provider-accounts", {
    params: { header: key() },
    body: {
      provider: "BRALE",
      apiClientId,
      apiClientSecret: "brale_secret_456",
      ...(providerAccountId ? { providerAccountId } : {}),
    },
  });
}

async function linked(client: SandboxClient, apiClientId: string): Promise<string> {
  const { data, error } = await link(client, apiClientId);
  if (!data) throw new Error(`not linked: ${JSON.stringify(error)}`);
  return data.id;
}

function register(client: SandboxClient, token: string, stablecoinProviderAccountId?: string) {
  return client.POST("/stablecoins", {
    params: { header: key() },
    body: {
      providerTokenIdentifier: token,
      networkTokenIdentifier: `btknrt1${token.toLowerCase()}qw508d6qejxtdg4y5r3zarvary0c5xw7k`,
      network: "SPARK",
      ...(stablecoinProviderAccountId ? { stablecoinProviderAccountId } : {}),
    },
  });
}

function mint(
  client: SandboxClient,
  stablecoinId: string,
  body: Schemas["StablecoinMintRequest"],
  headers: Record<string, string> = key(),
) {
  return client.POST("/stablecoins/{stablecoinId}/mints", {
    params: { path: { stablecoinId }, header: headers as { "Idempotency-Key": string } },
    body,
  });
}

function burn(client: SandboxClient, stablecoinId: string, body: Schemas["StablecoinBurnRequest"]) {
  return client.POST("/stablecoins/{stablecoinId}/burns", {
    params: { path: { stablecoinId }, header: key() },
    body,
  });
}

async function operation(client: SandboxClient, id: string): Promise<Operation> {
  const { data, error } = await client.GET("/stablecoin-operations/{stablecoinOperationId}", {
    params: { path: { stablecoinOperationId: id } },
  });
  if (!data) throw new Error(`no operation ${id}: ${JSON.stringify(error)}`);
  return data;
}

function codeOf(error: unknown): string | undefined {
  return (error as ErrorBody | undefined)?.code;
}

/** Each account's ledger entries add up to its balance as the API shows it. */
async function expectLedgerIs(sandbox: TestSandbox, accountId: string, balance: number) {
  const entries = await sandbox.server.data.all(
    q.selectFrom("LedgerEntry").select("amount").where("accountId", "=", accountId),
  );
  const sum = entries.reduce((total, e) => total + e.amount, 0n);
  expect(sum).toBe(BigInt(balance));
  expect(await balanceOf(sandbox.client, accountId)).toBe(balance);
}

describe.each(databases)("stablecoins on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  describe("provider account links", () => {
    it("keeps the status the provider reports, never the secret, and lists and reads them", async () => {
      const client = await sandbox.otherPlatformClient();
      const active = await link(client, "brale_client_123");
      expect(active.response.status).toBe(201);
      expect(active.data).toEqual({
        id: expect.stringMatching(/^StablecoinProviderAccount:[0-9a-f-]{36}$/),
        provider: "BRALE",
        providerAccountId: expect.stringMatching(/^[0-9A-Za-z]{27}$/),
        providerEnvironment: "SANDBOX",
        status: "ACTIVE",
        lastVerifiedAt: expect.any(String),
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect(JSON.stringify(active.data)).not.toContain("brale_secret_456");

      const invalid = await link(client, "brale_client_002");
      expect(invalid.data).toMatchObject({ status: "INVALID" });
      expect(invalid.data).not.toHaveProperty("lastVerifiedAt");
      const revoked = await link(client, "brale_client_003", "2VcUIonJeVQzFoBuC7LdFT0dRe4");
      expect(revoked.data).toMatchObject({
        status: "REVOKED",
        providerAccountId: "2VcUIonJeVQzFoBuC7LdFT0dRe4",
      });

      const again = await link(client, "another_client", "2VcUIonJeVQzFoBuC7LdFT0dRe4");
      expect(again.response.status).toBe(409);
      expect(again.error).toMatchObject({
        code: "CONFLICT",
        details: { stablecoinProviderAccountId: revoked.data?.id },
      });

      const read = await client.GET("/stablecoin-provider-accounts/{stablecoinProviderAccountId}", {
        params: { path: { stablecoinProviderAccountId: active.data!.id } },
      });
      expect(read.data).toEqual(active.data);

      const onlyRevoked = await client.GET("/stablecoin-provider-accounts", {
        params: { query: { status: "REVOKED" } },
      });
      expect(onlyRevoked.data).toEqual({ data: [revoked.data], hasMore: false, totalCount: 1 });

      const first = await client.GET("/stablecoin-provider-accounts", {
        params: { query: { limit: 2, provider: "BRALE" } },
      });
      expect(first.data?.data.map((a) => a.id)).toEqual([revoked.data?.id, invalid.data?.id]);
      expect(first.data).toMatchObject({ hasMore: true, totalCount: 3 });
      const second = await client.GET("/stablecoin-provider-accounts", {
        params: { query: { limit: 2, cursor: first.data!.nextCursor! } },
      });
      expect(second.data).toEqual({ data: [active.data], hasMore: false, totalCount: 3 });

      const unknown = await client.GET(
        "/stablecoin-provider-accounts/{stablecoinProviderAccountId}",
        {
          params: {
            path: { stablecoinProviderAccountId: `StablecoinProviderAccount:${randomUUID()}` },
          },
        },
      );
      expect(unknown.response.status).toBe(404);
      expect(codeOf(unknown.error)).toBe("STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND");

      // Another platform sees none of them.
      const other = sandbox.client;
      const hidden = await other.GET(
        "/stablecoin-provider-accounts/{stablecoinProviderAccountId}",
        {
          params: { path: { stablecoinProviderAccountId: active.data!.id } },
        },
      );
      expect(hidden.response.status).toBe(404);
      expect(codeOf(hidden.error)).toBe("STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND");
      const otherList = await other.GET("/stablecoin-provider-accounts", {
        params: { query: { status: "REVOKED" } },
      });
      expect(otherList.data?.data.map((a) => a.id)).not.toContain(revoked.data?.id);
    });

    it("replays a link for the same Idempotency-Key and needs the key", async () => {
      const client = await sandbox.otherPlatformClient();
      const headers = key();
      const body = {
        provider: "BRALE" as const,
        apiClientId: "replayed_client",
        apiClientSecret: "s3cret",
      };
      const first = await client.POST("/stablecoin-provider-accounts", {
        params: { header: headers },
        body,
      });
      const second = await client.POST("/stablecoin-provider-accounts", {
        params: { header: headers },
        body,
      });
      expect(second.response.status).toBe(201);
      expect(second.data).toEqual(first.data);
      const list = await client.GET("/stablecoin-provider-accounts");
      expect(list.data?.totalCount).toBe(1);

      const keyless = await sandbox.rawFetch("/stablecoin-provider-accounts", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(keyless.status).toBe(400);
    });
  });

  describe("registration", () => {
    it("chooses the link, and refuses each unusable one with its code", async () => {
      const client = await sandbox.otherPlatformClient();
      const none = await register(client, "NONE");
      expect(none.response.status).toBe(404);
      expect(codeOf(none.error)).toBe("STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND");

      const invalidId = await linked(client, "brale_client_002");
      const onlyInvalid = await register(client, "ACME");
      expect(onlyInvalid.response.status).toBe(400);
      expect(onlyInvalid.error).toMatchObject({
        code: "STABLECOIN_PROVIDER_ACCOUNT_INVALID",
        details: { stablecoinProviderAccountId: invalidId, status: "INVALID" },
      });
      const revokedId = await linked(client, "brale_client_003");
      expect(codeOf((await register(client, "ACME")).error)).toBe(
        "STABLECOIN_PROVIDER_ACCOUNT_REVOKED",
      );
      expect(codeOf((await register(client, "ACME", invalidId)).error)).toBe(
        "STABLECOIN_PROVIDER_ACCOUNT_INVALID",
      );
      expect(codeOf((await register(client, "ACME", revokedId)).error)).toBe(
        "STABLECOIN_PROVIDER_ACCOUNT_REVOKED",
      );
      const unknown = await register(client, "ACME", `StablecoinProviderAccount:${randomUUID()}`);
      expect(unknown.response.status).toBe(404);
      expect(codeOf(unknown.error)).toBe("STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND");

      const first = await linked(client, "brale_client_first");
      const acme = await register(client, "ACME");
      expect(acme.response.status).toBe(201);
      expect(acme.data).toEqual({
        id: expect.stringMatching(/^Stablecoin:[0-9a-f-]{36}$/),
        name: expect.stringContaining("ACME"),
        symbol: "ACME",
        baseCurrency: "USD",
        network: "SPARK",
        decimals: 6,
        issuanceStatus: "PROVISIONED",
        gridOperationsStatus: "ENABLED",
        networkTokenIdentifier: expect.stringMatching(/^btknrt1acme/),
        currency: "ACME",
        provider: "BRALE",
        stablecoinProviderAccountId: first,
        providerEnvironment: "SANDBOX",
        providerTokenIdentifier: "ACME",
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });

      const second = await linked(client, "brale_client_second");
      const ambiguous = await register(client, "BETA");
      expect(ambiguous.response.status).toBe(400);
      expect(codeOf(ambiguous.error)).toBe("STABLECOIN_PROVIDER_ACCOUNT_SELECTION_REQUIRED");
      const beta = await register(client, "BETA", second);
      expect(beta.data).toMatchObject({ symbol: "BETA", stablecoinProviderAccountId: second });

      const twice = await register(client, "ACME", second);
      expect(twice.response.status).toBe(409);
      expect(codeOf(twice.error)).toBe("CONFLICT");
      for (const taken of ["USD", "USDC", "USDB"]) {
        const refused = await register(client, taken, second);
        expect(refused.response.status).toBe(400);
        expect(codeOf(refused.error)).toBe("INVALID_INPUT");
      }

      // The token's balance is held by a platform account in its currency.
      const accounts = await client.GET("/platform/internal-accounts", {
        params: { query: { currency: "ACME" } },
      });
      expect(accounts.data?.data).toEqual([
        expect.objectContaining({
          type: "INTERNAL_CRYPTO",
          status: "ACTIVE",
          balance: { amount: 0, currency: { code: "ACME" } },
        }),
      ]);

      const page = await client.GET("/stablecoins", { params: { query: { limit: 1 } } });
      expect(page.data).toMatchObject({ data: [beta.data], hasMore: true, totalCount: 2 });
      const rest = await client.GET("/stablecoins", {
        params: { query: { limit: 1, cursor: page.data!.nextCursor! } },
      });
      expect(rest.data).toEqual({ data: [acme.data], hasMore: false, totalCount: 2 });
      const filtered = await client.GET("/stablecoins", {
        params: {
          query: {
            issuanceStatus: "PROVISIONED",
            gridOperationsStatus: "ENABLED",
            provider: "BRALE",
          },
        },
      });
      expect(filtered.data?.totalCount).toBe(2);
      const none2 = await client.GET("/stablecoins", {
        params: { query: { issuanceStatus: "REJECTED" } },
      });
      expect(none2.data).toEqual({ data: [], hasMore: false, totalCount: 0 });
      const read = await client.GET("/stablecoins/{stablecoinId}", {
        params: { path: { stablecoinId: acme.data!.id } },
      });
      expect(read.data).toEqual(acme.data);

      // Another platform can neither see the stablecoin nor register through the link.
      const outsider = sandbox.client;
      const hidden = await outsider.GET("/stablecoins/{stablecoinId}", {
        params: { path: { stablecoinId: acme.data!.id } },
      });
      expect(hidden.response.status).toBe(404);
      expect(codeOf(hidden.error)).toBe("REFERENCE_NOT_FOUND");
      const borrowed = await register(outsider, "GAMMA", first);
      expect(borrowed.response.status).toBe(404);
      expect(codeOf(borrowed.error)).toBe("STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND");
    });
  });

  describe("mints and burns", () => {
    let client: SandboxClient;
    let coin: Stablecoin;
    let usd: string;
    let tokenAccount: string;
    let bank: string;
    let spark: string;

    beforeAll(async () => {
      client = sandbox.client;
      await linked(client, "brale_client_main");
      const registered = await register(client, "SBXD");
      if (!registered.data) throw new Error(JSON.stringify(registered.error));
      coin = registered.data;
      usd = (await platformAccount(client, "USD")).id;
      const held = await client.GET("/platform/internal-accounts", {
        params: { query: { currency: "SBXD" } },
      });
      tokenAccount = held.data!.data[0]!.id;
      rememberAccount(tokenAccount, { currency: "SBXD" });
      const bankAccount = await client.POST("/platform/external-accounts", {
        body: { currency: "USD", accountInfo: bankAccountInfo("100") },
      });
      bank = bankAccount.data!.id;
      const wallet = await client.POST("/platform/external-accounts", {
        body: {
          currency: "BTC",
          accountInfo: {
            accountType: "SPARK_WALLET",
            address: "sp1pgss9qmwe3a2v7u3s0tl5gdf7pz2c4uabc",
          },
        },
      });
      spark = wallet.data!.id;
      await fund(client, usd, 1_000_000);
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
    });

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
