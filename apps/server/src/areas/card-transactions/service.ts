import type { Schemas } from "@sandbox/client";
import { cardAuthorizationOutcome, type CardPullResolution } from "@sandbox/sandbox-rules";
import type { Tx } from "../../db/client.js";
import type { CardTransaction as Row } from "../../db/generated/sqlite/client.js";
import { ApiError, notFound } from "../../errors.js";
import { emitEvent } from "../../events/outbox.js";
import type { RequestContext, Services } from "../../http/context.js";
import {
  afterCursor,
  decodeCursor,
  newestFirst,
  toPage,
  type Page,
} from "../../http/pagination.js";
import { newId } from "../../ids.js";
import type { JobHandlers } from "../../jobs/registry.js";
import { scheduleJob } from "../../jobs/schedule.js";
import type { CardService } from "../cards/service.js";
import { fundingSourcesOf } from "../cards/view.js";
import { giveBack, tryPull, type MoveTarget } from "./funding-moves.js";
import {
  EVENT_OF_STATUS,
  toCardTransaction,
  type CardDeclineReason,
  type CardTransaction,
  type CardTransactionStatus,
} from "./view.js";

export type SimulateAuthorization = Schemas["SimulateCardAuthorizationRequest"];
export type SimulateClearing = Schemas["SimulateCardClearingRequest"];
export type SimulateReturn = Schemas["SimulateCardReturnRequest"];
export type SimulateIncrement = Schemas["SimulateCardIncrementRequest"];
export type SimulateReversal = Schemas["SimulateCardReversalRequest"];

export interface CardTransactionFilter {
  cardId?: string;
  limit: number;
  cursor?: string;
}

export const CARD_PULL_JOB = "card.pull";
export interface CardPullJobPayload {
  cardTransactionId: string;
  pullId: string;
  /** Sandbox time the pull resolves. */
  at: string;
  resolution: CardPullResolution;
}

// Many authorizations may queue for a database connection at once (a burst on
// one funding source); waiting is better than failing them.
const TX_OPTIONS = { maxWait: 15_000, timeout: 30_000 };

type ChildKind = "PULL" | "SETTLEMENT" | "REFUND" | "RELEASE";
type ChildStatus = "PENDING" | "CONFIRMED" | "FAILED";
interface ChildEvent {
  kind: ChildKind;
  amount: bigint;
  status: ChildStatus;
}

/** The parts of a transaction that its child events change. */
type Progress = Pick<
  Row,
  | "authorizedAmount"
  | "heldAmount"
  | "settledAmount"
  | "refundedAmount"
  | "pullCount"
  | "pullTotal"
  | "pullPending"
  | "settlementCount"
  | "settlementTotal"
  | "refundCount"
  | "refundTotal"
> & { status: CardTransactionStatus };

function progressOf(row: Row): Progress {
  return {
    status: row.status as CardTransactionStatus,
    authorizedAmount: row.authorizedAmount,
    heldAmount: row.heldAmount,
    settledAmount: row.settledAmount,
    refundedAmount: row.refundedAmount,
    pullCount: row.pullCount,
    pullTotal: row.pullTotal,
    pullPending: row.pullPending,
    settlementCount: row.settlementCount,
    settlementTotal: row.settlementTotal,
    refundCount: row.refundCount,
    refundTotal: row.refundTotal,
  };
}

function targetOf(row: Row, at: Date): MoveTarget {
  if (row.fundingSourceId === null) throw new Error(`${row.id} has no funding source`);
  return {
    platformId: row.platformId,
    accountId: row.fundingSourceId,
    cardTransactionId: row.id,
    at,
  };
}

function requireStatus(row: Row, allowed: readonly CardTransactionStatus[], action: string) {
  if (!allowed.includes(row.status as CardTransactionStatus)) {
    throw new ApiError(
      409,
      "INVALID_STATE_TRANSITION",
      `A ${row.status} card transaction cannot be ${action}; it must be ${allowed.join(" or ")}`,
      { details: { status: row.status } },
    );
  }
}

const later = (a: Date, b: Date) => (a.getTime() >= b.getTime() ? a : b);

/**
 * Records how a pull resolved. A failed pull gives back what the transaction
 * still holds and moves it to the status the sandbox table names (EXCEPTION).
 */
async function resolvePull(
  tx: Tx,
  row: Row,
  next: Progress,
  pull: { id: string; amount: bigint },
  resolution: CardPullResolution,
  at: Date,
): Promise<void> {
  await tx.cardTransactionEvent.update({
    where: { id: pull.id },
    data: { status: resolution.pullStatus, updatedAt: at },
  });
  next.pullPending -= 1;
  if (resolution.pullStatus === "FAILED") {
    next.pullTotal -= pull.amount;
    await giveBack(tx, targetOf(row, at), next.heldAmount, "CARD_PULL_FAILED");
    next.heldAmount = 0n;
    next.status = resolution.transactionStatus;
  }
}

class Skip extends Error {}

export class CardTransactionService {
  constructor(
    private readonly services: Services,
    private readonly cards: CardService,
  ) {}

  registerJobs(handlers: JobHandlers): void {
    handlers.register(CARD_PULL_JOB, async (job) => {
      await this.applyPullResolution(job.platformId, job.payload as CardPullJobPayload);
    });
  }

  async get(ctx: RequestContext, id: string): Promise<CardTransaction> {
    const row = await this.services.db.cardTransaction.findFirst({
      where: { id, platformId: ctx.platformId },
    });
    if (!row) throw notFound("TRANSACTION_NOT_FOUND", `Card transaction ${id} not found`);
    return toCardTransaction(row);
  }

  async list(ctx: RequestContext, filter: CardTransactionFilter): Promise<Page<CardTransaction>> {
    const rows = await this.services.db.cardTransaction.findMany({
      where: {
        platformId: ctx.platformId,
        ...(filter.cardId ? { cardId: filter.cardId } : {}),
        ...afterCursor(decodeCursor(filter.cursor)),
      },
      orderBy: newestFirst,
      take: filter.limit + 1,
    });
    return toPage(rows, filter.limit, toCardTransaction);
  }

  /**
   * A simulated authorization. Always creates a transaction: AUTHORIZED with
   * one pull (the hold, a guarded debit on the first funding source that
   * covers the amount), or DECLINED with the reason and nothing pulled.
   */
  async authorize(
    ctx: RequestContext,
    cardId: string,
    input: SimulateAuthorization,
  ): Promise<CardTransaction> {
    const card = await this.cards.getRow(ctx, cardId);
    if (input.currency.code !== card.currency) {
      throw new ApiError(
        400,
        "INVALID_CURRENCY",
        `The card is in ${card.currency}; the authorization is in ${input.currency.code}`,
      );
    }
    const rule = cardAuthorizationOutcome(input.merchant.descriptor).outcome;
    let declineReason: CardDeclineReason | undefined =
      card.state === "FROZEN"
        ? "CARD_PAUSED"
        : card.state !== "ACTIVE"
          ? "CARD_NOT_ACTIVE"
          : rule.kind === "DECLINE"
            ? rule.declineReason
            : undefined;
    const at = ctx.clock.now();
    const realNow = this.services.clock.now();
    const id = newId("CardTransaction");
    const amount = BigInt(input.amount);

    const result = await this.services.db.$transaction(async (tx) => {
      let source: string | null = null;
      if (declineReason === undefined) {
        for (const accountId of fundingSourcesOf(card)) {
          const target = { platformId: ctx.platformId, accountId, cardTransactionId: id, at };
          if (await tryPull(tx, target, amount, "CARD_AUTHORIZATION")) {
            source = accountId;
            break;
          }
        }
        if (source === null) declineReason = "INSUFFICIENT_FUNDS";
      }
      const pull = rule.kind === "APPROVE" && source !== null ? rule.pull : undefined;
      const row = await tx.cardTransaction.create({
        data: {
          id,
          platformId: ctx.platformId,
          cardId: card.id,
          customerId: card.cardholderId,
          fundingSourceId: source,
          status: pull ? "AUTHORIZED" : "DECLINED",
          declineReason: pull ? null : (declineReason ?? null),
          merchantDescriptor: input.merchant.descriptor,
          merchantMcc: input.merchant.mcc,
          merchantCountry: input.merchant.country,
          currency: input.currency.code,
          authorizedAmount: pull ? amount : 0n,
          heldAmount: pull ? amount : 0n,
          settledAmount: 0n,
          refundedAmount: 0n,
          pullCount: pull ? 1 : 0,
          pullTotal: pull ? amount : 0n,
          // Until it resolves, a pull is pending: for a moment, or for a while.
          pullPending:
            pull && !(pull.afterSeconds === 0 && pull.pullStatus === "CONFIRMED") ? 1 : 0,
          settlementCount: 0,
          settlementTotal: 0n,
          refundCount: 0,
          refundTotal: 0n,
          authorizedAt: at,
          lastEventAt: at,
          createdAt: at,
          updatedAt: at,
        },
      });
      const announce = (r: Row) =>
        emitEvent(tx, {
          platformId: ctx.platformId,
          type: EVENT_OF_STATUS[r.status as CardTransactionStatus],
          objectId: r.id,
          data: toCardTransaction(r),
          at,
        });
      await announce(row);
      if (!pull) return row;

      const pullId = newId("CardTransactionEvent");
      const settlesNow = pull.afterSeconds === 0;
      await tx.cardTransactionEvent.create({
        data: {
          id: pullId,
          platformId: ctx.platformId,
          cardTransactionId: id,
          kind: "PULL",
          amount,
          status: settlesNow && pull.pullStatus === "CONFIRMED" ? "CONFIRMED" : "PENDING",
          createdAt: at,
          updatedAt: at,
        },
      });
      if (!settlesNow) {
        const payload: CardPullJobPayload = {
          cardTransactionId: id,
          pullId,
          at: new Date(at.getTime() + pull.afterSeconds * 1000).toISOString(),
          resolution: pull,
        };
        await scheduleJob(tx, {
          platformId: ctx.platformId,
          kind: CARD_PULL_JOB,
          payload,
          delaySeconds: pull.afterSeconds,
          now: realNow,
        });
        return row;
      }
      if (pull.pullStatus === "CONFIRMED") return row;
      // The pull reports failure straight away: AUTHORIZED, then the failure.
      const next = progressOf(row);
      await resolvePull(tx, row, next, { id: pullId, amount }, pull, at);
      const failed = await tx.cardTransaction.update({
        where: { id },
        data: { ...next, version: { increment: 1 } },
      });
      await announce(failed);
      return failed;
    }, TX_OPTIONS);
    return toCardTransaction(result);
  }

  async clear(ctx: RequestContext, cardId: string, input: SimulateClearing) {
    await this.cards.getRow(ctx, cardId);
    const cleared = BigInt(input.amount);
    const at = ctx.clock.now();
    return this.change(
      ctx.platformId,
      input.cardTransactionId,
      cardId,
      at,
      async (tx, row, next) => {
        requireStatus(row, ["AUTHORIZED"], "cleared");
        const target = targetOf(row, at);
        const children: ChildEvent[] = [];
        // While AUTHORIZED, what is held equals what is authorized.
        const held = next.heldAmount;
        if (cleared === 0n) {
          await giveBack(tx, target, held, "CARD_RELEASE");
          if (held > 0n) children.push({ kind: "RELEASE", amount: held, status: "CONFIRMED" });
          next.heldAmount = 0n;
          next.status = "EXPIRED";
          return children;
        }
        if (cleared > held) {
          const difference = cleared - held;
          const pulled = await tryPull(tx, target, difference, "CARD_PULL");
          children.push({
            kind: "PULL",
            amount: difference,
            status: pulled ? "CONFIRMED" : "FAILED",
          });
          next.pullCount += 1;
          if (pulled) next.pullTotal += difference;
          next.status = pulled ? "SETTLED" : "EXCEPTION";
        } else if (cleared < held) {
          await giveBack(tx, target, held - cleared, "CARD_RELEASE");
          children.push({ kind: "RELEASE", amount: held - cleared, status: "CONFIRMED" });
          next.status = "PARTIALLY_SETTLED";
        } else {
          next.status = "SETTLED";
        }
        children.push({ kind: "SETTLEMENT", amount: cleared, status: "CONFIRMED" });
        next.heldAmount = 0n;
        next.settledAmount += cleared;
        next.settlementCount += 1;
        next.settlementTotal += cleared;
        return children;
      },
    );
  }

  async refund(ctx: RequestContext, cardId: string, input: SimulateReturn) {
    await this.cards.getRow(ctx, cardId);
    const amount = BigInt(input.amount);
    const at = ctx.clock.now();
    return this.change(
      ctx.platformId,
      input.cardTransactionId,
      cardId,
      at,
      async (tx, row, next) => {
        requireStatus(row, ["SETTLED", "PARTIALLY_SETTLED"], "refunded");
        const refundable = next.settledAmount - next.refundedAmount;
        if (amount > refundable) {
          throw new ApiError(
            400,
            "INVALID_AMOUNT",
            `At most ${refundable} is left to refund on this transaction`,
            { details: { refundable: Number(refundable) } },
          );
        }
        await giveBack(tx, targetOf(row, at), amount, "CARD_REFUND");
        next.refundedAmount += amount;
        next.refundCount += 1;
        next.refundTotal += amount;
        if (next.refundedAmount === next.settledAmount) next.status = "REFUNDED";
        return [{ kind: "REFUND", amount, status: "CONFIRMED" }];
      },
    );
  }

  async increment(ctx: RequestContext, cardId: string, input: SimulateIncrement) {
    const card = await this.cards.getRow(ctx, cardId);
    if (card.state !== "ACTIVE") {
      throw new ApiError(
        409,
        "INVALID_STATE_TRANSITION",
        `The card is ${card.state}; only an ACTIVE card takes incremental authorizations`,
      );
    }
    const amount = BigInt(input.amount);
    const at = ctx.clock.now();
    return this.change(
      ctx.platformId,
      input.cardTransactionId,
      cardId,
      at,
      async (tx, row, next) => {
        requireStatus(row, ["AUTHORIZED"], "incremented");
        if (!(await tryPull(tx, targetOf(row, at), amount, "CARD_PULL"))) {
          throw new ApiError(
            400,
            "AMOUNT_OUT_OF_RANGE",
            "The funding source cannot cover the increment; the authorization is unchanged",
            { details: { reason: "INSUFFICIENT_FUNDS" } },
          );
        }
        next.authorizedAmount += amount;
        next.heldAmount += amount;
        next.pullCount += 1;
        next.pullTotal += amount;
        return [{ kind: "PULL", amount, status: "CONFIRMED" }];
      },
    );
  }

  async reverse(ctx: RequestContext, cardId: string, input: SimulateReversal) {
    await this.cards.getRow(ctx, cardId);
    const at = ctx.clock.now();
    return this.change(
      ctx.platformId,
      input.cardTransactionId,
      cardId,
      at,
      async (tx, row, next) => {
        requireStatus(row, ["AUTHORIZED"], "reversed");
        const amount = input.amount === undefined ? next.authorizedAmount : BigInt(input.amount);
        if (amount > next.authorizedAmount) {
          throw new ApiError(
            400,
            "INVALID_AMOUNT",
            `At most ${next.authorizedAmount} is authorized on this transaction`,
            { details: { authorizedAmount: Number(next.authorizedAmount) } },
          );
        }
        await giveBack(tx, targetOf(row, at), amount, "CARD_RELEASE");
        next.authorizedAmount -= amount;
        next.heldAmount -= amount;
        if (next.authorizedAmount === 0n) next.status = "REVERSED";
        return [{ kind: "RELEASE", amount, status: "CONFIRMED" }];
      },
    );
  }

  /** The delayed resolution of a pending pull (job). Idempotent. */
  private async applyPullResolution(platformId: string, payload: CardPullJobPayload) {
    const at = new Date(payload.at);
    await this.change(
      platformId,
      payload.cardTransactionId,
      undefined,
      at,
      async (tx, row, next) => {
        const pull = await tx.cardTransactionEvent.findUnique({ where: { id: payload.pullId } });
        if (!pull || pull.status !== "PENDING") return "skip";
        await resolvePull(tx, row, next, pull, payload.resolution, at);
        return [];
      },
    );
  }

  /**
   * One change to a card transaction: claims the row's version (so concurrent
   * changes to one transaction apply one after the other, on both databases),
   * runs `op` to move money and update the progress, records the child events,
   * saves, and emits the event of the resulting status with the whole parent.
   * `op` may throw an ApiError (nothing is kept) or return "skip".
   */
  private async change(
    platformId: string,
    id: string,
    cardId: string | undefined,
    at: Date,
    op: (tx: Tx, row: Row, next: Progress) => Promise<ChildEvent[] | "skip">,
  ): Promise<CardTransaction> {
    const db = this.services.db;
    for (let attempt = 0; attempt < 8; attempt++) {
      const row = await db.cardTransaction.findFirst({
        where: { id, platformId, ...(cardId ? { cardId } : {}) },
      });
      if (!row) throw notFound("TRANSACTION_NOT_FOUND", `Card transaction ${id} not found`);
      try {
        const saved = await db.$transaction(async (tx) => {
          const { count } = await tx.cardTransaction.updateMany({
            where: { id, version: row.version },
            data: { version: { increment: 1 } },
          });
          if (count !== 1) return undefined;
          const next = progressOf(row);
          const children = await op(tx, row, next);
          if (children === "skip") throw new Skip();
          if (children.length > 0) {
            await tx.cardTransactionEvent.createMany({
              data: children.map((child) => ({
                id: newId("CardTransactionEvent"),
                platformId,
                cardTransactionId: id,
                ...child,
                createdAt: at,
                updatedAt: at,
              })),
            });
          }
          const stamp = later(at, row.lastEventAt);
          const updated = await tx.cardTransaction.update({
            where: { id },
            data: { ...next, lastEventAt: stamp, updatedAt: later(at, row.updatedAt) },
          });
          await emitEvent(tx, {
            platformId,
            type: EVENT_OF_STATUS[updated.status as CardTransactionStatus],
            objectId: id,
            data: toCardTransaction(updated),
            at: stamp,
          });
          return updated;
        }, TX_OPTIONS);
        if (saved) return toCardTransaction(saved);
      } catch (err) {
        if (err instanceof Skip) return toCardTransaction(row);
        throw err;
      }
    }
    throw new ApiError(409, "CONFLICT", "The card transaction kept changing; retry the request");
  }
}
