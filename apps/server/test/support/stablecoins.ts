// Steps the stablecoin tests share: linking a provider account, registering a
// token, minting and burning it, reading operations, and the ledger check.
// Each takes the client of the platform it acts for.
import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { SandboxClient, Schemas } from "@payments-sandbox/client";
import { q } from "../../src/db/query.js";
import type { TestSandbox } from "../harness.js";
import {
  balanceOf,
  bankAccountInfo,
  fund,
  platformAccount,
  rememberAccount,
} from "../money-helpers.js";

type Operation = Schemas["StablecoinOperation"];
type Stablecoin = Schemas["Stablecoin"];
type ErrorBody = { status?: number; code?: string; details?: Record<string, unknown> };

export const key = () => ({ "Idempotency-Key": randomUUID() });

export function link(client: SandboxClient, apiClientId: string, providerAccountId?: string) {
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

export async function linked(client: SandboxClient, apiClientId: string): Promise<string> {
  const { data, error } = await link(client, apiClientId);
  if (!data) throw new Error(`not linked: ${JSON.stringify(error)}`);
  return data.id;
}

export function register(
  client: SandboxClient,
  token: string,
  stablecoinProviderAccountId?: string,
) {
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

export function mint(
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

export function burn(
  client: SandboxClient,
  stablecoinId: string,
  body: Schemas["StablecoinBurnRequest"],
) {
  return client.POST("/stablecoins/{stablecoinId}/burns", {
    params: { path: { stablecoinId }, header: key() },
    body,
  });
}

export async function operation(client: SandboxClient, id: string): Promise<Operation> {
  const { data, error } = await client.GET("/stablecoin-operations/{stablecoinOperationId}", {
    params: { path: { stablecoinOperationId: id } },
  });
  if (!data) throw new Error(`no operation ${id}: ${JSON.stringify(error)}`);
  return data;
}

export function codeOf(error: unknown): string | undefined {
  return (error as ErrorBody | undefined)?.code;
}

/** Each account's ledger entries add up to its balance as the API shows it. */
export async function expectLedgerIs(sandbox: TestSandbox, accountId: string, balance: number) {
  const entries = await sandbox.server.data.all(
    q.selectFrom("LedgerEntry").select("amount").where("accountId", "=", accountId),
  );
  const sum = entries.reduce((total, e) => total + e.amount, 0n);
  expect(sum).toBe(BigInt(balance));
  expect(await balanceOf(sandbox.client, accountId)).toBe(balance);
}

/** What the mint and burn tests work with, on the platform of `client`. */
export interface MintingDesk {
  client: SandboxClient;
  coin: Stablecoin;
  /** The platform's USD account, funded with 10,000.00 USD. */
  usd: string;
  /** The platform account that holds the token. */
  tokenAccount: string;
  bank: string;
  spark: string;
}

/** A linked provider account, a registered token (SBXD), a funded USD account, a bank and a Spark wallet. */
export async function mintingDesk(client: SandboxClient): Promise<MintingDesk> {
  await linked(client, "brale_client_main");
  const registered = await register(client, "SBXD");
  if (!registered.data) throw new Error(JSON.stringify(registered.error));
  const coin = registered.data;
  const usd = (await platformAccount(client, "USD")).id;
  const held = await client.GET("/platform/internal-accounts", {
    params: { query: { currency: "SBXD" } },
  });
  const tokenAccount = held.data!.data[0]!.id;
  rememberAccount(tokenAccount, { currency: "SBXD" });
  const bankAccount = await client.POST("/platform/external-accounts", {
    body: { currency: "USD", accountInfo: bankAccountInfo("100") },
  });
  const bank = bankAccount.data!.id;
  const wallet = await client.POST("/platform/external-accounts", {
    body: {
      currency: "BTC",
      accountInfo: {
        accountType: "SPARK_WALLET",
        address: "sp1pgss9qmwe3a2v7u3s0tl5gdf7pz2c4uabc",
      },
    },
  });
  const spark = wallet.data!.id;
  await fund(client, usd, 1_000_000);
  return { client, coin, usd, tokenAccount, bank, spark };
}
