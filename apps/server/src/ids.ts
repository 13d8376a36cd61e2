import { randomUUID } from "node:crypto";

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
  | "Agent"
  | "Job";

export function newId(type: IdType): string {
  return `${type}:${randomUUID()}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isId(type: IdType, value: string): boolean {
  const prefix = `${type}:`;
  return value.startsWith(prefix) && UUID.test(value.slice(prefix.length));
}
