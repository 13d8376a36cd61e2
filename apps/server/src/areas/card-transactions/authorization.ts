import type { CardPullResolution } from "@payments-sandbox/sandbox-rules";
import { q, run, type Row as RowOf } from "../../db/query.js";

type Row = RowOf<"CardTransaction">;
import type { SqlCommit, SqlInsert, SqlProgram } from "../../db/sql.js";
import { defineSqlPrograms } from "../../db/sql-programs.js";
import { outboxInsert } from "../../events/outbox.js";
import { newId } from "../../ids.js";
import { jobRow } from "../../jobs/schedule.js";
import { balanceOf, credit, guardedDebit } from "../ledger/ledger.js";
import { pullEffect } from "./pull-resolution.js";
import { EVENT_OF_STATUS, toCardTransaction, type CardTransactionStatus } from "./view.js";

// A simulated authorization: the hot path of the card sandbox, a program
// (db/sql-programs.ts) that may run on the SQLite writer thread. The guarded
// debit is the hold.
//
// An approval is one guarded step: the debit of a funding source and, only if
// it covers the amount, every record of the authorization (the transaction,
// its event, its pull, its ledger entry, the pull's job). The funding sources
// are tried in order; when none covers the amount nothing is written and the
// program answers null: the authorization is declined, and a decline keeps no
// record, as in production. Each step is a whole, consistent change on its
// own, so on PostgreSQL the common cases take one statement and no BEGIN or
// COMMIT (see SqlCommit). Only a pull that fails at once changes the approval
// again, and that needs a transaction.

export const CARD_PULL_JOB = "card.pull";
export interface CardPullJobPayload {
  cardTransactionId: string;
  pullId: string;
  /** Sandbox time the pull resolves. */
  at: string;
  resolution: CardPullResolution;
}

export interface AuthorizationPlan {
  platformId: string;
  cardId: string;
  customerId: string;
  /** The cardholder's platformCustomerId, kept on the transaction. */
  platformCustomerId: string;
  /**
   * The funding sources as read before the authorization, in the same order
   * (an id that names no account of the platform is left out): tried in
   * order, the first that covers the amount is pulled from, and its balance
   * event shows it as read, with the balance the debit returns.
   */
  fundingAccounts: readonly RowOf<"InternalAccount">[];
  amount: bigint;
  currency: string;
  merchant: { descriptor: string; mcc?: string | undefined; country?: string | undefined };
  /** Sandbox time of the authorization. */
  at: Date;
  /** Real time now, for the job's due time. */
  realNow: Date;
  /** How the pull resolves when the authorization is approved. */
  pull: CardPullResolution;
  /**
   * A financial (single-message) authorization: the approval also clears the
   * amount, so the pull settles at once instead of holding (SETTLED, one
   * settlement). The same guarded step, one more record in it.
   */
  settle?: boolean;
}

/** How an authorization's steps must be committed (see SqlCommit). */
export function authorizationCommit(plan: AuthorizationPlan): SqlCommit {
  return failsAtOnce(plan.pull) ? "transaction" : "eachStep";
}

function failsAtOnce(pull: CardPullResolution): boolean {
  return pull.afterSeconds === 0 && pull.pullStatus !== "CONFIRMED";
}

/** The approved transaction, or null when no funding source covers the amount (nothing written). */
export function* authorizationSteps(plan: AuthorizationPlan): SqlProgram<Row | null> {
  const id = newId("CardTransaction");
  const { platformId, amount, at, pull } = plan;
  const confirmedNow = pull.afterSeconds === 0 && pull.pullStatus === "CONFIRMED";

  const settles = plan.settle === true;

  const transaction = (source: string): Row => {
    const settled = settles ? amount : 0n;
    return newTransactionRow({
      id,
      platformId,
      cardId: plan.cardId,
      customerId: plan.customerId,
      platformCustomerId: plan.platformCustomerId,
      fundingSourceId: source,
      direction: "DEBIT",
      status: settles ? "SETTLED" : "AUTHORIZED",
      merchant: plan.merchant,
      currency: plan.currency,
      at,
      authorizedAmount: amount,
      heldAmount: amount - settled,
      settledAmount: settled,
      pullCount: 1,
      pullTotal: amount,
      // Until it resolves, a pull is pending: for a moment, or for a while.
      pullPending: confirmedNow ? 0 : 1,
    });
  };
  const announce = (r: Row): SqlInsert =>
    outboxInsert({
      platformId,
      type: EVENT_OF_STATUS[r.status as CardTransactionStatus],
      objectId: id,
      data: toCardTransaction(r),
      at,
    });

  const pullId = newId("CardTransactionEvent");
  for (const account of plan.fundingAccounts) {
    const source = account.id;
    const row = transaction(source);
    const records: SqlInsert[] = [
      { table: "CardTransaction", row },
      announce(row),
      {
        table: "CardTransactionEvent",
        row: {
          id: pullId,
          platformId,
          cardTransactionId: id,
          kind: "PULL",
          amount,
          status: confirmedNow ? "CONFIRMED" : "PENDING",
          createdAt: at,
          updatedAt: at,
        },
      },
    ];
    if (settles) records.push(childRow(id, platformId, "SETTLEMENT", amount, at));
    if (pull.afterSeconds > 0) {
      const payload: CardPullJobPayload = {
        cardTransactionId: id,
        pullId,
        at: new Date(at.getTime() + pull.afterSeconds * 1000).toISOString(),
        resolution: pull,
      };
      const job = jobRow({
        platformId,
        kind: CARD_PULL_JOB,
        payload,
        delaySeconds: pull.afterSeconds,
        now: plan.realNow,
      });
      records.push({ table: "Job", row: job });
    }
    const posting = { platformId, accountId: source, amount, at, reference: id };
    const debit = { ...posting, kind: settles ? "CARD_FINANCIAL" : "CARD_AUTHORIZATION" };
    const debited = yield guardedDebit(debit, account, records);
    if (balanceOf(debited) === null) continue;
    if (!failsAtOnce(pull)) return row;
    return yield* failPullAtOnce(row, pullId, pull, posting, announce);
  }
  return null;
}

/** The pull reports failure straight away: announced AUTHORIZED, then this. */
function* failPullAtOnce(
  row: Row,
  pullId: string,
  pull: CardPullResolution,
  posting: { platformId: string; accountId: string; amount: bigint; at: Date; reference: string },
  announce: (r: Row) => SqlInsert,
): SqlProgram<Row> {
  const { amount, at } = posting;
  const effect = pullEffect(row, amount, pull);
  if (effect.release > 0n) {
    yield* credit({ ...posting, amount: effect.release, kind: "CARD_PULL_FAILED" });
  }
  yield* run(
    q
      .updateTable("CardTransactionEvent")
      .set({ status: pull.pullStatus, updatedAt: at })
      .where("id", "=", pullId),
  );
  const resolved: Row = {
    ...row,
    status: effect.status,
    pullPending: effect.pullPending,
    pullTotal: effect.pullTotal,
    heldAmount: effect.heldAmount,
    version: 1,
  };
  yield* run(
    q
      .updateTable("CardTransaction")
      .set({
        status: resolved.status,
        pullPending: resolved.pullPending,
        pullTotal: resolved.pullTotal,
        heldAmount: resolved.heldAmount,
        version: resolved.version,
      })
      .where("id", "=", row.id),
  );
  yield { kind: "insert", ...announce(resolved) };
  return resolved;
}

/**
 * The authorization as a program of the SQLite writer thread, which imports
 * this module by its URL to run it there.
 */
export const { cardAuthorization } = defineSqlPrograms(
  import.meta.url,
  { cardAuthorization: authorizationSteps },
  { cardAuthorization: authorizationCommit },
);

/** A card transaction's parts that differ from a new transaction with nothing on it. */
export interface NewTransaction {
  id: string;
  platformId: string;
  cardId: string;
  customerId: string;
  platformCustomerId: string;
  fundingSourceId: string | null;
  direction: "DEBIT" | "CREDIT";
  status: CardTransactionStatus;
  merchant: { descriptor: string; mcc?: string | undefined; country?: string | undefined };
  currency: string;
  at: Date;
  authorizedAmount?: bigint;
  heldAmount?: bigint;
  settledAmount?: bigint;
  pullCount?: number;
  pullTotal?: bigint;
  pullPending?: number;
}

/**
 * The row of a new card transaction: what it authorized, holds, settled and
 * pulled as given, and everything else at zero. Its one settlement, if it
 * settled, is counted (a new transaction has at most the one).
 */
export function newTransactionRow(t: NewTransaction): Row {
  const settled = t.settledAmount ?? 0n;
  return {
    id: t.id,
    platformId: t.platformId,
    cardId: t.cardId,
    customerId: t.customerId,
    platformCustomerId: t.platformCustomerId,
    fundingSourceId: t.fundingSourceId,
    status: t.status,
    direction: t.direction,
    // A column of the days when declines were kept; a decline now keeps no row.
    declineReason: null,
    merchantDescriptor: t.merchant.descriptor,
    merchantMcc: t.merchant.mcc ?? null,
    merchantCountry: t.merchant.country ?? null,
    currency: t.currency,
    authorizedAmount: t.authorizedAmount ?? 0n,
    heldAmount: t.heldAmount ?? 0n,
    settledAmount: settled,
    refundedAmount: 0n,
    pullCount: t.pullCount ?? 0,
    pullTotal: t.pullTotal ?? 0n,
    pullPending: t.pullPending ?? 0,
    settlementCount: settled > 0n ? 1 : 0,
    settlementTotal: settled,
    refundCount: 0,
    refundTotal: 0n,
    version: 0,
    authorizedAt: t.at,
    lastEventAt: t.at,
    createdAt: t.at,
    updatedAt: t.at,
  };
}

/** A child event of a transaction, confirmed (a pull is written by the authorization itself). */
export function childRow(
  cardTransactionId: string,
  platformId: string,
  kind: "SETTLEMENT" | "RELEASE",
  amount: bigint,
  at: Date,
): SqlInsert {
  return {
    table: "CardTransactionEvent",
    row: {
      id: newId("CardTransactionEvent"),
      platformId,
      cardTransactionId,
      kind,
      amount,
      status: "CONFIRMED",
      createdAt: at,
      updatedAt: at,
    },
  };
}
