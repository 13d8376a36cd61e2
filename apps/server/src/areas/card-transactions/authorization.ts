import type { CardPullResolution } from "@sandbox/sandbox-rules";
import type { CardTransaction as Row } from "../../db/generated/sqlite/client.js";
import { RestartTransaction, type SqlProgram } from "../../db/sql.js";
import { outboxRow } from "../../events/outbox.js";
import { newId } from "../../ids.js";
import { jobRow } from "../../jobs/schedule.js";
import { creditSteps, debitSteps } from "../ledger/ledger-sql.js";
import { pullEffect } from "./pull-resolution.js";
import {
  EVENT_OF_STATUS,
  toCardTransaction,
  type CardDeclineReason,
  type CardTransactionStatus,
} from "./view.js";

// A simulated authorization, as one direct-SQL transaction (db/sql.ts): it is
// the hot path of the card sandbox, so it does not go through Prisma. The
// guarded debit is the hold; everything else is inserts.
//
// The funding source is chosen by a plain read, the records are written, and
// the guarded debit comes last. Many authorizations on one card contend for
// one account row; done this way a transaction holds that row's lock only
// from its debit to its commit. If the debit finds the money gone (another
// authorization took it since the read), the transaction starts again and
// reads afresh, so the outcome is the same as debiting first.

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
  /** Tried in order; the first that covers the amount is pulled from. */
  fundingSources: readonly string[];
  amount: bigint;
  currency: string;
  merchant: { descriptor: string; mcc: string; country: string };
  /** Sandbox time of the authorization. */
  at: Date;
  /** Real time now, for the job's due time. */
  realNow: Date;
  /** A decline decided before any money moves (card state, sandbox suffix). */
  declineReason?: CardDeclineReason;
  /** How the pull resolves when the authorization is approved. */
  pull: CardPullResolution;
}

export function* authorizationSteps(plan: AuthorizationPlan): SqlProgram<Row> {
  const id = newId("CardTransaction");
  const { platformId, amount, at } = plan;

  let source: string | null = null;
  if (plan.declineReason === undefined) {
    for (const accountId of plan.fundingSources) {
      const account = (yield {
        kind: "one",
        sql: `SELECT "balance" FROM "InternalAccount" WHERE "id" = ? AND "platformId" = ?`,
        params: [accountId, platformId],
      }) as { balance: bigint | string } | undefined;
      if (account && BigInt(account.balance) >= amount) {
        source = accountId;
        break;
      }
    }
  }
  const declineReason = plan.declineReason ?? (source === null ? "INSUFFICIENT_FUNDS" : null);
  const approved = declineReason === null;
  const pull = plan.pull;
  const confirmedNow = pull.afterSeconds === 0 && pull.pullStatus === "CONFIRMED";

  const row: Row = {
    id,
    platformId,
    cardId: plan.cardId,
    customerId: plan.customerId,
    fundingSourceId: source,
    status: approved ? "AUTHORIZED" : "DECLINED",
    declineReason,
    merchantDescriptor: plan.merchant.descriptor,
    merchantMcc: plan.merchant.mcc,
    merchantCountry: plan.merchant.country,
    currency: plan.currency,
    authorizedAmount: approved ? amount : 0n,
    heldAmount: approved ? amount : 0n,
    settledAmount: 0n,
    refundedAmount: 0n,
    pullCount: approved ? 1 : 0,
    pullTotal: approved ? amount : 0n,
    // Until it resolves, a pull is pending: for a moment, or for a while.
    pullPending: approved && !confirmedNow ? 1 : 0,
    settlementCount: 0,
    settlementTotal: 0n,
    refundCount: 0,
    refundTotal: 0n,
    version: 0,
    authorizedAt: at,
    lastEventAt: at,
    createdAt: at,
    updatedAt: at,
  };
  yield { kind: "insert", table: "CardTransaction", row };
  const announce = (r: Row) =>
    outboxRow({
      platformId,
      type: EVENT_OF_STATUS[r.status as CardTransactionStatus],
      objectId: id,
      data: toCardTransaction(r),
      at,
    });
  yield { kind: "insert", table: "WebhookEvent", row: announce(row) };
  if (!approved || source === null) return row;

  const pullId = newId("CardTransactionEvent");
  yield {
    kind: "insert",
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
  };
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
    yield { kind: "insert", table: "Job", row: job };
  }
  // The pull itself, the hold: the guarded debit, written last (see above).
  const posting = { platformId, accountId: source, amount, kind: "CARD_AUTHORIZATION", at };
  if ((yield* debitSteps({ ...posting, reference: id })) === null) throw new RestartTransaction();
  if (confirmedNow || pull.afterSeconds > 0) return row;

  // The pull reports failure straight away: announced AUTHORIZED, then this.
  const effect = pullEffect(row, amount, pull);
  if (effect.release > 0n) {
    yield* creditSteps({
      platformId,
      accountId: source,
      amount: effect.release,
      kind: "CARD_PULL_FAILED",
      reference: id,
      at,
    });
  }
  yield {
    kind: "run",
    sql: `UPDATE "CardTransactionEvent" SET "status" = ?, "updatedAt" = ? WHERE "id" = ?`,
    params: [pull.pullStatus, at, pullId],
  };
  const resolved: Row = {
    ...row,
    status: effect.status,
    pullPending: effect.pullPending,
    pullTotal: effect.pullTotal,
    heldAmount: effect.heldAmount,
    version: 1,
  };
  yield {
    kind: "run",
    sql: `UPDATE "CardTransaction" SET "status" = ?, "pullPending" = ?, "pullTotal" = ?, "heldAmount" = ?, "version" = ? WHERE "id" = ?`,
    params: [
      resolved.status,
      resolved.pullPending,
      resolved.pullTotal,
      resolved.heldAmount,
      resolved.version,
      id,
    ],
  };
  yield { kind: "insert", table: "WebhookEvent", row: announce(resolved) };
  return resolved;
}
