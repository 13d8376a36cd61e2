import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { codeOf, key, link, linked, register } from "./support/stablecoins.js";

// Stablecoins: provider account links and registered tokens. Their mints and
// burns are in stablecoins-operations.test.ts and stablecoins-refusals.test.ts.

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
});
