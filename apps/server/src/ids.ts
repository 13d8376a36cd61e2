import { randomFillSync, randomUUID } from "node:crypto";
import { mintedIdReadsAsMagic } from "@payments-sandbox/sandbox-rules";
import { v7 } from "uuid";

// The spec's id form is `Type:<uuid>`.
export type IdType =
  | "Platform"
  | "Customer"
  | "InternalAccount"
  | "ExternalAccount"
  | "LedgerEntry"
  | "AuthMethod"
  | "Session"
  | "Request"
  | "Quote"
  | "Transaction"
  | "Card"
  | "CardTransaction"
  | "CardTransactionEvent"
  | "Webhook"
  | "Verification"
  | "BeneficialOwner"
  | "LookupRequest"
  | "Document"
  | "Agent"
  | "AgentAction"
  | "BulkImportJob"
  | "Job"
  | "ScaChallenge"
  | "ContactVerificationCode"
  | "Stablecoin"
  | "StablecoinOperation"
  | "StablecoinProviderAccount"
  | "DelegatedKey"
  | "ScaFactor"
  | "ScaFactorReset";

// Record ids are time-ordered (version 7): rows written together then sit
// together in every index keyed by an id, so a transaction dirties a few
// pages at the end of each index instead of one random page per row. On
// SQLite that cut the card authorization's write cost by about half
// (bench/RESULTS.md). A request id is a one-time challenge handle, so it
// stays fully random (version 4).

const POOL_IDS = 256;
const pool = new Uint8Array(16 * POOL_IDS);
let used = POOL_IDS;

/** 16 random bytes, drawn from a pool refilled in bulk (one system call per 256 ids). */
function randomBytes16(): Uint8Array {
  if (used === POOL_IDS) {
    randomFillSync(pool);
    used = 0;
  }
  return pool.subarray(16 * used, 16 * ++used);
}

export function newId(type: IdType): string {
  if (type === "Request") return `${type}:${randomUUID()}`;
  for (;;) {
    const id = `${type}:${v7({ random: randomBytes16() })}`;
    // A magic suffix is the partner's choice, never a chance of the draw.
    if (!mintedIdReadsAsMagic(type, id)) return id;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isId(type: IdType, value: string): boolean {
  const prefix = `${type}:`;
  return value.startsWith(prefix) && UUID.test(value.slice(prefix.length));
}
