import type { Schemas } from "@payments-sandbox/client";
import type { Row } from "../../db/query.js";

// The API's views of the stablecoin area's rows. The JSON columns of an
// operation hold the API's own objects, written by operations.ts.

export type Stablecoin = Schemas["Stablecoin"];
export type StablecoinOperation = Schemas["StablecoinOperation"];
export type StablecoinProviderAccount = Schemas["StablecoinProviderAccount"];
export type ProviderAccountRow = Row<"StablecoinProviderAccount">;
export type StablecoinRow = Row<"Stablecoin">;
export type OperationRow = Row<"StablecoinOperation">;

export function toProviderAccount(row: ProviderAccountRow): StablecoinProviderAccount {
  return {
    id: row.id,
    provider: row.provider as StablecoinProviderAccount["provider"],
    providerAccountId: row.providerAccountId,
    providerEnvironment:
      row.providerEnvironment as StablecoinProviderAccount["providerEnvironment"],
    status: row.status as StablecoinProviderAccount["status"],
    ...(row.lastVerifiedAt !== null ? { lastVerifiedAt: row.lastVerifiedAt.toISOString() } : {}),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toStablecoin(row: StablecoinRow): Stablecoin {
  return {
    id: row.id,
    name: row.name,
    symbol: row.symbol,
    baseCurrency: row.baseCurrency,
    network: row.network as Stablecoin["network"],
    decimals: row.decimals,
    issuanceStatus: row.issuanceStatus as Stablecoin["issuanceStatus"],
    gridOperationsStatus: row.gridOperationsStatus as Stablecoin["gridOperationsStatus"],
    networkTokenIdentifier: row.networkTokenIdentifier,
    ...(row.currency !== null ? { currency: row.currency } : {}),
    provider: row.provider as Stablecoin["provider"],
    stablecoinProviderAccountId: row.stablecoinProviderAccountId,
    providerEnvironment: row.providerEnvironment as Stablecoin["providerEnvironment"],
    providerTokenIdentifier: row.providerTokenIdentifier,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

type OperationStatus = StablecoinOperation["status"];

/** The provider's own word for each status, as the sandbox's provider reports it. */
const PROVIDER_STATUS: Record<OperationStatus, string> = {
  CREATED: "created",
  PENDING_FUNDING: "awaiting_funds",
  PENDING_PROVIDER: "pending",
  PROCESSING: "processing",
  COMPLETED: "complete",
  FAILED: "failed",
  EXPIRED: "expired",
};

export function toOperation(row: OperationRow): StablecoinOperation {
  const status = row.status as OperationStatus;
  return {
    id: row.id,
    stablecoinId: row.stablecoinId,
    operationType: row.operationType as StablecoinOperation["operationType"],
    status,
    amount: row.amount.toString(),
    provider: row.provider as StablecoinOperation["provider"],
    providerEnvironment: row.providerEnvironment as StablecoinOperation["providerEnvironment"],
    stablecoinProviderAccountId: row.stablecoinProviderAccountId,
    source: JSON.parse(row.source) as NonNullable<StablecoinOperation["source"]>,
    ...(row.fundingInstructions !== null
      ? { fundingInstructions: JSON.parse(row.fundingInstructions) as Record<string, unknown> }
      : {}),
    destination: JSON.parse(row.destination) as NonNullable<StablecoinOperation["destination"]>,
    ...(row.estimatedDelivery !== null
      ? { estimatedDelivery: JSON.parse(row.estimatedDelivery) as Record<string, unknown> }
      : {}),
    ...(row.expiresAt !== null ? { expiresAt: row.expiresAt.toISOString() } : {}),
    providerStatus: PROVIDER_STATUS[status],
    ...(row.failureReason !== null ? { failureReason: row.failureReason } : {}),
    ...(row.description !== null ? { description: row.description } : {}),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
