import type { Schemas } from "@sandbox/client";
import { cardAuthorizationOutcome, type CardPullResolution } from "@sandbox/sandbox-rules";
import { insertAll, one, prepared, q, rowOf, run, type Row as RowOf } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";
import { ApiError, fieldError, invalidInput, notFound } from "../../errors.js";
import { emitEvent } from "../../events/outbox.js";
import type { RequestContext, Services } from "../../http/context.js";
import { newId } from "../../ids.js";
import type { JobHandlers } from "../../jobs/registry.js";
import type { CardService } from "../cards/service.js";
import { amountOutOfRange, inAmountRange } from "../ledger/amount-range.js";
import { CARD_PULL_JOB, type AuthorizationPlan, type CardPullJobPayload } from "./authorization.js";
import { giveBack, tryPull, type MoveTarget } from "./funding-moves.js";
import { pullEffect } from "./pull-resolution.js";
import {
  EVENT_OF_STATUS,
  toCardTransaction,
  type CardDeclineReason,
  type CardTransaction,
  type CardTransactionStatus,
} from "./view.js";

export type SimulateAuthorization = Schemas["SandboxCardAuthorizationRequest"];
export type SimulateClearing = Schemas["SandboxCardClearingRequest"];
export type SimulateReturn = Schemas["SandboxCardReturnRequest"];
export type SimulateIncrement = Schemas["SimulateCardIncrementRequest"];
export type SimulateReversal = Schemas["SimulateCardReversalRequest"];

type Row = RowOf<"CardTransaction">;

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

/** The progress amounts that the transaction's views carry: each must stay in the API's range. */
const CARRIED_AMOUNTS = [
  "authorizedAmount",
  "heldAmount",
  "settledAmount",
  "refundedAmount",
  "pullTotal",
  "settlementTotal",
  "refundTotal",
] as const satisfies readonly (keyof Progress)[];

/** Refuses a change whose totals would leave the range (the view could not be answered). */
function requireAmountsInRange(next: Progress): void {
  for (const field of CARRIED_AMOUNTS) {
    if (!inAmountRange(next[field])) {
      throw amountOutOfRange(`This change would take the transaction's ${field} out of range`, {
        field,
      });
    }
  }
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

/** Records how a pull resolved (see pull-resolution.ts). */
function* resolvePull(
  row: Row,
  next: Progress,
  pull: { id: string; amount: bigint },
  resolution: CardPullResolution,
  at: Date,
): SqlProgram<void> {
  yield* run(
    q
      .updateTable("CardTransactionEvent")
      .set({ status: resolution.pullStatus, updatedAt: at })
      .where("id", "=", pull.id),
  );
  const effect = pullEffect(next, pull.amount, resolution);
  yield* giveBack(targetOf(row, at), effect.release, "CARD_PULL_FAILED");
  next.pullPending = effect.pullPending;
  next.pullTotal = effect.pullTotal;
  next.heldAmount = effect.heldAmount;
  next.status = effect.status;
}

class Skip extends Error {}

/** What an authorization reads of its card. */
interface CardForUse {
  id: string;
  cardholderId: string;
  platformCustomerId: string;
  state: string;
  currency: string;
  /** JSON array of internal account ids, in order. */
  fundingSources: string;
  maxSpendPerTransaction: bigint | null;
}

/**
 * The card as an authorization needs it (the hot path), compiled once, with
 * its cardholder's accounts in the same read: a card is funded only by its
 * cardholder's accounts (cards/service.ts), and its balance events show them
 * as they were read here. One row per account; the card's own columns are
 * renamed where an account has a column of the same name.
 */
const cardForUse = prepared((args: { cardId: string; platformId: string }) =>
  q
    .selectFrom("Card")
    .innerJoin("Customer", "Customer.id", "Card.cardholderId")
    .leftJoin("InternalAccount as a", (join) =>
      join
        .onRef("a.customerId", "=", "Card.cardholderId")
        .onRef("a.platformId", "=", "Card.platformId"),
    )
    .select([
      "Card.id as cardId",
      "Card.cardholderId",
      "Customer.platformCustomerId",
      "Card.state",
      "Card.currency as cardCurrency",
      "Card.fundingSources",
      "Card.maxSpendPerTransaction",
      "Card.pendingIssuance",
    ])
    .selectAll("a")
    .where("Card.id", "=", args.cardId)
    .where("Card.platformId", "=", args.platformId),
);

/** The pull of a declined authorization: never made. */
const NO_PULL: CardPullResolution = { afterSeconds: 0, pullStatus: "CONFIRMED" };

/**
 * Signs a card's pull from an embedded wallet (the wallet's delegated key for
 * this card, see areas/auth/delegated-keys.ts); false when nothing may sign it.
 */
export interface WalletPullSigner {
  authorizeCardPayment(
    ctx: RequestContext,
    payment: {
      cardId: string;
      accountId: string;
      amount: bigint;
      currency: string;
      merchantDescriptor: string;
    },
  ): Promise<boolean>;
}

export class CardTransactionService {
  constructor(
    private readonly services: Services,
    private readonly cards: CardService,
    private readonly walletPulls: WalletPullSigner,
  ) {}

  registerJobs(handlers: JobHandlers): void {
    handlers.register(CARD_PULL_JOB, async (job) => {
      await this.applyPullResolution(job.platformId, job.payload as CardPullJobPayload);
    });
  }

  /**
   * A simulated authorization. Always creates a transaction: AUTHORIZED with
   * one pull (the hold, a guarded debit on the first funding source that
   * covers the amount), or DECLINED with the reason and nothing pulled. Runs
   * as direct SQL (authorization.ts): it is the hot path.
   */
  async authorize(
    ctx: RequestContext,
    cardId: string,
    input: SimulateAuthorization,
  ): Promise<CardTransaction> {
    const { card, accounts } = await this.cardForAuthorization(ctx, cardId);
    if (input.currency.code === undefined) {
      throw invalidInput("currency.code is required: the currency of the authorization", {
        errors: [fieldError("body.currency.code", "required")],
      });
    }
    if (input.currency.code !== card.currency) {
      throw new ApiError(
        400,
        "INVALID_CURRENCY",
        `The card is in ${card.currency}; the authorization is in ${input.currency.code}`,
      );
    }
    const rule = cardAuthorizationOutcome(input.merchant.descriptor).outcome;
    const amount = BigInt(input.amount);
    const declineReason: CardDeclineReason | undefined =
      card.state === "FROZEN"
        ? "CARD_PAUSED"
        : card.state !== "ACTIVE"
          ? "CARD_NOT_ACTIVE"
          : card.maxSpendPerTransaction !== null && amount > card.maxSpendPerTransaction
            ? "MAX_SPEND_EXCEEDED"
            : rule.kind === "DECLINE"
              ? rule.declineReason
              : undefined;
    const fundingSources = JSON.parse(card.fundingSources) as string[];
    const byId = new Map(accounts.map((account) => [account.id, account]));
    // The funding sources that exist, in the card's order.
    const fundingAccounts =
      declineReason === undefined
        ? await this.usableFundingAccounts(
            ctx,
            fundingSources.flatMap((id) => byId.get(id) ?? []),
            {
              cardId: card.id,
              amount,
              currency: input.currency.code,
              merchantDescriptor: input.merchant.descriptor,
            },
          )
        : [];
    const plan: AuthorizationPlan = {
      platformId: ctx.platformId,
      cardId: card.id,
      customerId: card.cardholderId,
      platformCustomerId: card.platformCustomerId,
      fundingSources,
      fundingAccounts,
      amount,
      currency: input.currency.code,
      merchant: input.merchant,
      at: ctx.clock.now(),
      realNow: this.services.clock.now(),
      ...(declineReason ? { declineReason } : {}),
      pull: rule.kind === "APPROVE" ? rule.pull : NO_PULL,
    };
    return toCardTransaction(await this.services.data.program("cardAuthorization", plan));
  }

  /**
   * The funding sources a pull may draw on, in the card's order. An embedded
   * wallet counts only when its delegated key for this card signs the pull
   * (none, PENDING or REVOKED: the card cannot draw on the wallet).
   */
  private async usableFundingAccounts(
    ctx: RequestContext,
    accounts: RowOf<"InternalAccount">[],
    payment: { cardId: string; amount: bigint; currency: string; merchantDescriptor: string },
  ): Promise<RowOf<"InternalAccount">[]> {
    if (!accounts.some((account) => account.type === "EMBEDDED_WALLET")) return accounts;
    const signed = await Promise.all(
      accounts.map(
        async (account) =>
          account.type !== "EMBEDDED_WALLET" ||
          (await this.walletPulls.authorizeCardPayment(ctx, { ...payment, accountId: account.id })),
      ),
    );
    return accounts.filter((_, i) => signed[i]);
  }

  /** The card and its cardholder's accounts, as the authorization needs them, in one read. */
  private async cardForAuthorization(
    ctx: RequestContext,
    cardId: string,
  ): Promise<{ card: CardForUse; accounts: RowOf<"InternalAccount">[] }> {
    const rows = await this.services.data.all(cardForUse({ cardId, platformId: ctx.platformId }));
    const first = rows[0];
    if (!first) throw notFound("REFERENCE_NOT_FOUND", `Card ${cardId} not found`);
    const accounts = rows.flatMap((r): RowOf<"InternalAccount">[] =>
      r.id === null
        ? []
        : [
            {
              id: r.id,
              platformId: r.platformId!,
              customerId: r.customerId,
              type: r.type!,
              currency: r.currency!,
              balance: r.balance!,
              status: r.status!,
              privacyEnabled: r.privacyEnabled!,
              walletPrivateKey: r.walletPrivateKey,
              createdAt: r.createdAt!,
              updatedAt: r.updatedAt!,
            },
          ],
    );
    // An issuance step may be due: the card service applies it first.
    if (first.pendingIssuance !== null) {
      const card = await this.cards.getRow(ctx, cardId);
      return { card: { ...card, platformCustomerId: first.platformCustomerId }, accounts };
    }
    const card: CardForUse = {
      id: first.cardId,
      cardholderId: first.cardholderId,
      platformCustomerId: first.platformCustomerId,
      state: first.state,
      currency: first.cardCurrency,
      fundingSources: first.fundingSources,
      maxSpendPerTransaction: first.maxSpendPerTransaction,
    };
    return { card, accounts };
  }

  async clear(ctx: RequestContext, cardId: string, input: SimulateClearing) {
    await this.cards.getRow(ctx, cardId);
    const cleared = BigInt(input.amount);
    const at = ctx.clock.now();
    return this.change(ctx.platformId, input.cardTransactionId, cardId, at, function* (row, next) {
      requireStatus(row, ["AUTHORIZED"], "cleared");
      const target = targetOf(row, at);
      const children: ChildEvent[] = [];
      // While AUTHORIZED, what is held equals what is authorized.
      const held = next.heldAmount;
      if (cleared === 0n) {
        yield* giveBack(target, held, "CARD_RELEASE");
        if (held > 0n) children.push({ kind: "RELEASE", amount: held, status: "CONFIRMED" });
        next.heldAmount = 0n;
        next.status = "EXPIRED";
        return children;
      }
      if (cleared > held) {
        const difference = cleared - held;
        const pulled = yield* tryPull(target, difference, "CARD_PULL");
        children.push({
          kind: "PULL",
          amount: difference,
          status: pulled ? "CONFIRMED" : "FAILED",
        });
        next.pullCount += 1;
        if (pulled) next.pullTotal += difference;
        next.status = pulled ? "SETTLED" : "EXCEPTION";
      } else if (cleared < held) {
        yield* giveBack(target, held - cleared, "CARD_RELEASE");
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
    });
  }

  async refund(ctx: RequestContext, cardId: string, input: SimulateReturn) {
    await this.cards.getRow(ctx, cardId);
    const amount = BigInt(input.amount);
    const at = ctx.clock.now();
    return this.change(ctx.platformId, input.cardTransactionId, cardId, at, function* (row, next) {
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
      yield* giveBack(targetOf(row, at), amount, "CARD_REFUND");
      next.refundedAmount += amount;
      next.refundCount += 1;
      next.refundTotal += amount;
      if (next.refundedAmount === next.settledAmount) next.status = "REFUNDED";
      return [{ kind: "REFUND", amount, status: "CONFIRMED" }];
    });
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
    return this.change(ctx.platformId, input.cardTransactionId, cardId, at, function* (row, next) {
      requireStatus(row, ["AUTHORIZED"], "incremented");
      if (!(yield* tryPull(targetOf(row, at), amount, "CARD_PULL"))) {
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
    });
  }

  async reverse(ctx: RequestContext, cardId: string, input: SimulateReversal) {
    await this.cards.getRow(ctx, cardId);
    const at = ctx.clock.now();
    return this.change(ctx.platformId, input.cardTransactionId, cardId, at, function* (row, next) {
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
      yield* giveBack(targetOf(row, at), amount, "CARD_RELEASE");
      next.authorizedAmount -= amount;
      next.heldAmount -= amount;
      if (next.authorizedAmount === 0n) next.status = "REVERSED";
      return [{ kind: "RELEASE", amount, status: "CONFIRMED" }];
    });
  }

  /** The delayed resolution of a pending pull (job). Idempotent. */
  private async applyPullResolution(platformId: string, payload: CardPullJobPayload) {
    const at = new Date(payload.at);
    await this.change(platformId, payload.cardTransactionId, undefined, at, function* (row, next) {
      const pull = yield* one(
        q
          .selectFrom("CardTransactionEvent")
          .select(["id", "amount", "status"])
          .where("id", "=", payload.pullId)
          .where("cardTransactionId", "=", row.id),
      );
      if (!pull || pull.status !== "PENDING") return "skip";
      yield* resolvePull(row, next, pull, payload.resolution, at);
      return [];
    });
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
    op: (row: Row, next: Progress) => SqlProgram<ChildEvent[] | "skip">,
  ): Promise<CardTransaction> {
    const db = this.services.data;
    let read = q
      .selectFrom("CardTransaction")
      .selectAll()
      .where("id", "=", id)
      .where("platformId", "=", platformId);
    if (cardId) read = read.where("cardId", "=", cardId);
    for (let attempt = 0; attempt < 8; attempt++) {
      const row = await db.one(read);
      if (!row) throw notFound("TRANSACTION_NOT_FOUND", `Card transaction ${id} not found`);
      try {
        const saved = await db.transaction(() => applyChange(row, at, op));
        if (saved) return toCardTransaction(saved);
      } catch (err) {
        if (err instanceof Skip) return toCardTransaction(row);
        throw err;
      }
    }
    throw new ApiError(409, "CONFLICT", "The card transaction kept changing; retry the request");
  }
}

/**
 * The change as one transaction: claims the version that was read (undefined
 * when another change came first), then applies `op`, records the child
 * events, saves the progress and emits the event of the resulting status.
 */
function* applyChange(
  row: Row,
  at: Date,
  op: (row: Row, next: Progress) => SqlProgram<ChildEvent[] | "skip">,
): SqlProgram<Row | undefined> {
  const claimed = yield* run(
    q
      .updateTable("CardTransaction")
      .set((eb) => ({ version: eb("version", "+", 1) }))
      .where("id", "=", row.id)
      .where("version", "=", row.version),
  );
  if (claimed !== 1) return undefined;
  const next = progressOf(row);
  const children = yield* op(row, next);
  if (children === "skip") throw new Skip();
  requireAmountsInRange(next);
  yield* insertAll(
    children.map((child) =>
      rowOf("CardTransactionEvent", {
        id: newId("CardTransactionEvent"),
        platformId: row.platformId,
        cardTransactionId: row.id,
        ...child,
        createdAt: at,
        updatedAt: at,
      }),
    ),
  );
  const stamp = later(at, row.lastEventAt);
  const updated = yield* one(
    q
      .updateTable("CardTransaction")
      .set({ ...next, lastEventAt: stamp, updatedAt: later(at, row.updatedAt) })
      .where("id", "=", row.id)
      .returningAll(),
  );
  if (!updated) throw new Error(`card transaction ${row.id} disappeared`);
  yield* emitEvent({
    platformId: row.platformId,
    type: EVENT_OF_STATUS[updated.status as CardTransactionStatus],
    objectId: row.id,
    data: toCardTransaction(updated),
    at: stamp,
  });
  return updated;
}
