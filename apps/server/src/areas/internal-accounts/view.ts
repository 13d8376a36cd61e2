import type { Schemas } from "@payments-sandbox/client";
import type { Row } from "../../db/query.js";
import { currencyAmount } from "../quotes/exchange-rates.js";
import { fundingInstructionsFor } from "./funding-instructions.js";

// The API's view of an internal account. Pure, so that the ledger can put it
// in an event from any thread (the SQLite writer thread runs the card
// authorization).

export type InternalAccount = Schemas["InternalAccount"];

export function toInternalAccount(row: Row<"InternalAccount">): InternalAccount {
  // Money settles at once in the sandbox: nothing is held back from `balance`.
  const balance = currencyAmount(row.balance, row.currency);
  return {
    id: row.id,
    ...(row.customerId !== null ? { customerId: row.customerId } : {}),
    type: row.type as InternalAccount["type"],
    status: row.status as InternalAccount["status"],
    balance,
    totalBalance: balance,
    fundingPaymentInstructions: fundingInstructionsFor(row),
    ...(row.type === "EMBEDDED_WALLET" ? { privateEnabled: row.privacyEnabled } : {}),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
