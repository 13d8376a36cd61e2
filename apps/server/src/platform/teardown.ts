import { all, q, run, type TableName } from "../db/query.js";
import type { SqlProgram } from "../db/sql.js";
import type { Tables } from "../db/tables.js";
import type { RateRule } from "../limits/rate-limit.js";

// Deleting an isolated platform (DELETE /sandbox/platforms/{platformId})
// removes every row it owns in one transaction. Every record carries its
// platformId (the tenancy rule), so "everything it owns" is every table
// with that column, listed below: a table added to the schema with a
// platformId but missing from the list does not compile. Two tables hold
// platform rows without the column and are reached through their owners:
// webhook attempts through their event, rate-limit counts through the
// credential their key names.

type OwnedTable = {
  [T in TableName]: "platformId" extends keyof Tables[T] ? T : never;
}[TableName];

/** Every table whose rows carry a platformId, children before parents where it reads better. */
export const PLATFORM_OWNED_TABLES = [
  "ApiToken",
  "AgentAction",
  "AgentAccessToken",
  "Agent",
  "AuthSession",
  "SignedChallenge",
  "DelegatedKey",
  "AuthMethod",
  "ScaChallenge",
  "ScaLoginState",
  "ScaFactorReset",
  "ScaFactor",
  "ContactVerificationCode",
  "KycLink",
  "Document",
  "BeneficialOwner",
  "CardRevealToken",
  "CardTransactionEvent",
  "CardTransaction",
  "Card",
  "LedgerEntry",
  "Transaction",
  "Quote",
  "LookupRequest",
  "Verification",
  "ExternalAccount",
  "InternalAccount",
  "Invitation",
  "StablecoinOperation",
  "Stablecoin",
  "StablecoinProviderAccount",
  "BulkImportJob",
  "IdempotencyRecord",
  "Job",
  // Deleted first, with its attempts (below), but listed so the check covers it.
  "WebhookEvent",
  "EventOrder",
  "Customer",
] as const satisfies readonly OwnedTable[];

type Unlisted = Exclude<OwnedTable, (typeof PLATFORM_OWNED_TABLES)[number]>;
const everyOwnedTableListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyOwnedTableListed;

/** Keys per statement: well under both databases' parameter limits. */
const CHUNK = 500;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/**
 * Deletes the platform and every row it owns; returns false when no such
 * platform exists. Runs inside the caller's transaction: all or nothing.
 * `credentialRules` are the rate limits counted per credential (the auth
 * area's): their counts of the platform's credentials go too.
 */
export function* deletePlatformAndData(
  platformId: string,
  credentialRules: readonly RateRule[],
): SqlProgram<boolean> {
  const removed = yield* run(q.deleteFrom("Platform").where("id", "=", platformId));
  if (removed === 0) return false;

  // Events first, then their attempts: deleting an event waits for a
  // delivery that is recording its attempt (it holds the event's row), and
  // a delivery that finishes after this sees its event gone and writes
  // nothing (events/outbox-store.ts recordWebhookAttempts).
  const events = yield* all(
    q.deleteFrom("WebhookEvent").where("platformId", "=", platformId).returning("id"),
  );
  for (const part of chunks(events.map((event) => event.id))) {
    yield* run(q.deleteFrom("WebhookAttempt").where("eventId", "in", part));
  }
  // A rate-limit key is `<rule>:<credential id>` (limits/rate-limit.ts).
  const methods = yield* all(
    q.selectFrom("AuthMethod").select("id").where("platformId", "=", platformId),
  );
  const rules = credentialRules.map((rule) => rule.name);
  const keys = methods.flatMap((method) => rules.map((rule) => `${rule}:${method.id}`));
  for (const part of chunks(keys)) {
    yield* run(q.deleteFrom("RateLimit").where("key", "in", part));
  }

  for (const table of PLATFORM_OWNED_TABLES) {
    yield* run(q.deleteFrom(table).where("platformId", "=", platformId));
  }
  return true;
}
