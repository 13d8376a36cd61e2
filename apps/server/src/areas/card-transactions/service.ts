import type { Schemas } from "@payments-sandbox/client";
import { cardAuthorizationOutcome, type CardPullResolution } from "@payments-sandbox/sandbox-rules";
import { insertAll, one, prepared, q, rowOf, run, type Row as RowOf } from "../../db/query.js";
import type { SqlInsert, SqlProgram } from "../../db/sql.js";
import { ApiError, fieldError, invalidInput, notFound } from "../../errors.js";
import { emitEvent } from "../../events/outbox.js";
import type { RequestContext, Services } from "../../http/context.js";
import { newId } from "../../ids.js";
import type { JobHandlers } from "../../jobs/registry.js";
import type { CardService } from "../cards/service.js";
import { amountOutOfRange, inAmountRange } from "../ledger/amount-range.js";
import {
  CARD_PULL_JOB,
  cardAuthorization,
  childRow,
  newTransactionRow,
  type AuthorizationPlan,
  type CardPullJobPayload,
} from "./authorization.js";
import { giveBack, tryPull, type MoveTarget } from "./funding-moves.js";
import { pullEffect } from "./pull-resolution.js";
import {
  EVENT_OF_STATUS,
  cardDecline,
  toCardTransaction,
  type CardAuthorizationResult,
  type CardDecline,
  type CardTransaction,
  type CardTransactionStatus,
} from "./view.js";

export type SimulateAuthorization = Schemas["SandboxCardAuthorizationRequest"];
export type SimulateClearing = Schemas["SandboxCardClearingRequest"];
export type SimulateReturn = Schemas["SandboxCardReturnRequest"];
export type SimulateIncrement = Schemas["SimulateCardIncrementRequest"];
export type SimulateReversal = Schemas["SimulateCardReversalRequest"];
export type SimulateBalanceInquiry = Schemas["SandboxCardBalanceInquiryRequest"];
export type SimulateAuthorizationAdvice = Schemas["SandboxCardAuthorizationAdviceRequest"];
export type SimulateTransactionRef = Schemas["SandboxCardTransactionRefRequest"];

/** The network messages that create a credit to the card (nothing is pulled). */
export type CreditMessage =
  /** Dual-message: authorized now, the credit posts when the merchant clears it. */
  | "CREDIT_AUTHORIZATION"
  /** The network approved a credit authorization on the issuer's behalf; as above. */
  | "CREDIT_AUTHORIZATION_ADVICE"
  /** Single-message: authorized and posted at once. */
  | "FINANCIAL_CREDIT_AUTHORIZATION";

type Row = RowOf<"CardTransaction">;

type ChildKind = "PULL" | "SETTLEMENT" | "REFUND" | "RELEASE";
/** REVERSED: a refund that a return reversal took back. */
type ChildStatus = "PENDING" | "CONFIRMED" | "FAILED" | "REVERSED";
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

/** A change that moves money the way only a purchase (a DEBIT transaction) can. */
function requireDebit(row: Row, action: string) {
  if (row.direction !== "DEBIT") {
    throw new ApiError(
      409,
      "INVALID_STATE_TRANSITION",
      `A credit card transaction cannot be ${action}; only a purchase can`,
      { details: { status: row.status, direction: row.direction } },
    );
  }
}

/**
 * What a settled purchase goes back to when its refunds no longer cover it:
 * PARTIALLY_SETTLED when less was settled than authorized, else SETTLED.
 */
const settledStatus = (next: Progress): CardTransactionStatus =>
  next.settledAmount < next.authorizedAmount ? "PARTIALLY_SETTLED" : "SETTLED";

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

/**
 * Whether a purchase still has an authorization to clear: AUTHORIZED, or an
 * authorization that an advice re-opened (it holds money again) after a
 * partial clearing or a failed pull. Otherwise 409.
 */
function requireOpen(row: Row, action: string) {
  if (row.status === "AUTHORIZED") return;
  if (row.heldAmount > 0n && (row.status === "PARTIALLY_SETTLED" || row.status === "EXCEPTION")) {
    return;
  }
  requireStatus(row, ["AUTHORIZED"], action);
}

/**
 * The clearing of a credit authorization posts the credit: the cleared
 * amount goes to the funding source, SETTLED (PARTIALLY_SETTLED below the
 * authorized amount); `0` expires it with nothing posted, which closes it:
 * SETTLED, as an expired purchase is (see clear).
 */
function* clearCredit(
  row: Row,
  next: Progress,
  cleared: bigint,
  at: Date,
): SqlProgram<ChildEvent[]> {
  requireStatus(row, ["AUTHORIZED"], "cleared");
  if (cleared === 0n) {
    next.status = "SETTLED";
    return [];
  }
  yield* giveBack(targetOf(row, at), cleared, "CARD_CREDIT");
  next.settledAmount += cleared;
  next.settlementCount += 1;
  next.settlementTotal += cleared;
  next.status = cleared < next.authorizedAmount ? "PARTIALLY_SETTLED" : "SETTLED";
  return [{ kind: "SETTLEMENT", amount: cleared, status: "CONFIRMED" }];
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

/** A card as read for a new transaction, with its cardholder's accounts. */
interface CardWithAccounts {
  card: CardForUse;
  accounts: RowOf<"InternalAccount">[];
}

/** The card's funding sources that exist, in the card's order. */
function fundingAccountsOf({ card, accounts }: CardWithAccounts): RowOf<"InternalAccount">[] {
  const byId = new Map(accounts.map((account) => [account.id, account]));
  return (JSON.parse(card.fundingSources) as string[]).flatMap((id) => byId.get(id) ?? []);
}

/**
 * How the card and the sandbox table decide a new authorization of any kind:
 * a decline, or how its pull resolves. The card's state comes first, then
 * (for money taken from the card only) its per-transaction limit, then the
 * last 3 characters of `merchant.descriptor`.
 */
function decide(
  card: CardForUse,
  descriptor: string,
  amount: bigint,
  spends: boolean,
): { decline: CardDecline } | { pull: CardPullResolution } {
  const decline = (reason: CardDecline["declineReason"], words: string) => ({
    decline: cardDecline(card.id, reason, words),
  });
  if (card.state === "FROZEN") return decline("CARD_PAUSED", "The card is FROZEN");
  if (card.state !== "ACTIVE") {
    return decline("CARD_NOT_ACTIVE", `The card is ${card.state}, not ACTIVE`);
  }
  const max = card.maxSpendPerTransaction;
  if (spends && max !== null && amount > max) {
    return decline(
      "MAX_SPEND_EXCEEDED",
      `${amount} is above the card's maxSpendPerTransaction of ${max}`,
    );
  }
  const { matched, outcome } = cardAuthorizationOutcome(descriptor);
  if (outcome.kind === "DECLINE") {
    return decline(
      outcome.declineReason,
      `The merchant descriptor ends in ${matched}: the sandbox declines it as ${outcome.declineReason}`,
    );
  }
  return { pull: outcome.pull };
}

/** No funding source of the card can cover the amount (or take a credit). */
function uncovered(cardId: string, amount: bigint, credit = false): CardDecline {
  return cardDecline(
    cardId,
    "INSUFFICIENT_FUNDS",
    credit
      ? "The card has no funding source to credit"
      : `No funding source of the card covers ${amount} (an embedded wallet counts only with an ACTIVE delegated key for the card)`,
  );
}

/** The currency of an authorization-shaped request: the card's, or 400. */
function requireCardCurrency(card: CardForUse, currency: SimulateAuthorization["currency"]) {
  if (currency.code === undefined) {
    throw invalidInput("currency.code is required: the currency of the authorization", {
      errors: [fieldError("body.currency.code", "required")],
    });
  }
  if (currency.code !== card.currency) {
    throw new ApiError(
      400,
      "INVALID_CURRENCY",
      `The card is in ${card.currency}; the authorization is in ${currency.code}`,
    );
  }
  return currency.code;
}

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
   * A simulated authorization. Approved, it creates the transaction,
   * AUTHORIZED with one pull (the hold, a guarded debit on the first funding
   * source that covers the amount). Declined, it answers the decline and
   * records nothing, as production keeps no transaction for a decline. Runs
   * as direct SQL (authorization.ts): it is the hot path.
   */
  async authorize(
    ctx: RequestContext,
    cardId: string,
    input: SimulateAuthorization,
    options: { settle?: boolean } = {},
  ): Promise<CardAuthorizationResult> {
    const read = await this.cardForAuthorization(ctx, cardId);
    const { card } = read;
    const currency = requireCardCurrency(card, input.currency);
    const amount = BigInt(input.amount);
    const decided = decide(card, input.merchant.descriptor, amount, true);
    if ("decline" in decided) return decided.decline;
    const fundingAccounts = await this.usableFundingAccounts(ctx, fundingAccountsOf(read), {
      cardId: card.id,
      amount,
      currency,
      merchantDescriptor: input.merchant.descriptor,
    });
    const plan: AuthorizationPlan = {
      platformId: ctx.platformId,
      cardId: card.id,
      customerId: card.cardholderId,
      platformCustomerId: card.platformCustomerId,
      fundingAccounts,
      amount,
      currency,
      merchant: input.merchant,
      at: ctx.clock.now(),
      realNow: this.services.clock.now(),
      pull: decided.pull,
      ...(options.settle ? { settle: true } : {}),
    };
    const approved = await this.services.data.program(cardAuthorization, plan);
    return approved ? toCardTransaction(approved) : uncovered(card.id, amount);
  }

  /**
   * A financial (single-message) authorization, such as an ATM withdrawal:
   * the authorization's one guarded pull, which settles the amount at once
   * (SETTLED, one pull, one settlement). Declines as an authorization does;
   * a pull that the sandbox table makes fail leaves it EXCEPTION with the
   * money back on the funding source.
   */
  financialAuthorization(ctx: RequestContext, cardId: string, input: SimulateAuthorization) {
    return this.authorize(ctx, cardId, input, { settle: true });
  }

  /**
   * A balance inquiry: an authorization of 0. Approved, it is AUTHORIZED with
   * nothing authorized, held or pulled; it declines on the card's state and
   * the descriptor's decline suffixes like any authorization (the pull
   * suffixes have no pull to act on). No money moves either way.
   */
  async balanceInquiry(
    ctx: RequestContext,
    cardId: string,
    input: SimulateBalanceInquiry,
  ): Promise<CardAuthorizationResult> {
    const read = await this.cardForAuthorization(ctx, cardId);
    const { card } = read;
    const decided = decide(card, input.merchant.descriptor, 0n, false);
    if ("decline" in decided) return decided.decline;
    const row = newTransactionRow({
      ...this.newTransactionOf(ctx, card, input.merchant, card.currency),
      fundingSourceId: fundingAccountsOf(read)[0]?.id ?? null,
      direction: "DEBIT",
      status: "AUTHORIZED",
    });
    return this.create(row, 0n);
  }

  /**
   * A credit to the card: the credit authorization (and its advice) is
   * AUTHORIZED with nothing moved, and its clearing posts the credit; the
   * financial credit authorization posts it at once (SETTLED). Either goes
   * to the card's first funding source, and declines on the card's state and
   * the descriptor's decline suffixes (a credit pulls nothing, so neither
   * the card's spending limit nor the pull suffixes apply), or when the card
   * has no funding source left to take it.
   */
  async credit(
    ctx: RequestContext,
    cardId: string,
    input: SimulateAuthorization,
    message: CreditMessage,
  ): Promise<CardAuthorizationResult> {
    const read = await this.cardForAuthorization(ctx, cardId);
    const { card } = read;
    const currency = requireCardCurrency(card, input.currency);
    const amount = BigInt(input.amount);
    const decided = decide(card, input.merchant.descriptor, amount, false);
    if ("decline" in decided) return decided.decline;
    // A credit goes to the first funding source that exists.
    const source = fundingAccountsOf(read)[0]?.id;
    if (source === undefined) return uncovered(card.id, amount, true);
    const posted = message === "FINANCIAL_CREDIT_AUTHORIZATION" ? amount : 0n;
    const row = newTransactionRow({
      ...this.newTransactionOf(ctx, card, input.merchant, currency),
      fundingSourceId: source,
      direction: "CREDIT",
      status: posted > 0n ? "SETTLED" : "AUTHORIZED",
      authorizedAmount: amount,
      settledAmount: posted,
    });
    return this.create(row, posted);
  }

  /** The parts of a new transaction that come from the request and its card. */
  private newTransactionOf(
    ctx: RequestContext,
    card: CardForUse,
    merchant: SimulateAuthorization["merchant"],
    currency: string,
  ) {
    return {
      id: newId("CardTransaction"),
      platformId: ctx.platformId,
      cardId: card.id,
      customerId: card.cardholderId,
      platformCustomerId: card.platformCustomerId,
      merchant,
      currency,
      at: ctx.clock.now(),
    };
  }

  /**
   * Records a new transaction that holds nothing, with its event, its one
   * settlement if it settled, and the credit of `credited` to its funding
   * source, in one transaction.
   */
  private async create(row: Row, credited: bigint): Promise<CardTransaction> {
    const saved = await this.services.data.transaction(function* () {
      if (credited > 0n) {
        yield* giveBack(targetOf(row, row.createdAt), credited, "CARD_CREDIT");
      }
      const inserts: SqlInsert[] = [{ table: "CardTransaction", row }];
      if (row.settledAmount > 0n) {
        inserts.push(
          childRow(row.id, row.platformId, "SETTLEMENT", row.settledAmount, row.createdAt),
        );
      }
      yield* insertAll(inserts);
      yield* emitEvent({
        platformId: row.platformId,
        type: EVENT_OF_STATUS[row.status as CardTransactionStatus],
        objectId: row.id,
        data: toCardTransaction(row),
        at: row.createdAt,
      });
      return row;
    });
    return toCardTransaction(saved);
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

  /** The card and its cardholder's accounts, as a new transaction needs them, in one read. */
  private async cardForAuthorization(
    ctx: RequestContext,
    cardId: string,
  ): Promise<CardWithAccounts> {
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
      if (row.direction === "CREDIT") return yield* clearCredit(row, next, cleared, at);
      requireOpen(row, "cleared");
      const target = targetOf(row, at);
      const children: ChildEvent[] = [];
      // What is held is what the open authorization still covers.
      const held = next.heldAmount;
      // Settled before: an authorization an advice re-opened after a partial clearing.
      const settledBefore = next.settledAmount > 0n;
      if (cleared === 0n) {
        yield* giveBack(target, held, "CARD_RELEASE");
        if (held > 0n) children.push({ kind: "RELEASE", amount: held, status: "CONFIRMED" });
        next.heldAmount = 0n;
        // Expired (production's AUTHORIZATION_EXPIRY): closed with nothing
        // settled, which production's statuses call SETTLED. An advice's
        // re-opened hold that expires leaves the partial settlement as it was.
        next.status = settledBefore ? "PARTIALLY_SETTLED" : "SETTLED";
      } else {
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
      }
      // A failed pull stays the transaction's news until it is dealt with.
      if (row.status === "EXCEPTION") next.status = "EXCEPTION";
      return children;
    });
  }

  async refund(ctx: RequestContext, cardId: string, input: SimulateReturn) {
    await this.cards.getRow(ctx, cardId);
    const amount = BigInt(input.amount);
    const at = ctx.clock.now();
    return this.change(ctx.platformId, input.cardTransactionId, cardId, at, function* (row, next) {
      requireStatus(row, ["SETTLED", "PARTIALLY_SETTLED"], "refunded");
      requireDebit(row, "refunded");
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
      requireDebit(row, "incremented");
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
      next.authorizedAmount -= amount;
      // Wholly reversed: closed with nothing settled, SETTLED in production's
      // statuses (it has none of its own for a reversal), as an expiry is.
      if (next.authorizedAmount === 0n) next.status = "SETTLED";
      // A credit authorization holds nothing: only its amount changes.
      if (row.direction === "CREDIT") return [];
      yield* giveBack(targetOf(row, at), amount, "CARD_RELEASE");
      next.heldAmount -= amount;
      return [{ kind: "RELEASE", amount, status: "CONFIRMED" }];
    });
  }

  /**
   * An authorization advice: the network re-sizes an open authorization
   * (AUTHORIZED, or PARTIALLY_SETTLED) to a new total. The hold follows: it
   * becomes the new total less what is already settled, pulling the
   * difference (as an increment does) or releasing it (as a reversal does).
   * The network has already approved the new total, so a pull the funding
   * source cannot cover is recorded FAILED and the transaction becomes
   * EXCEPTION, its authorization re-sized all the same. Below what is
   * settled is 400 INVALID_AMOUNT.
   */
  async authorizationAdvice(
    ctx: RequestContext,
    cardId: string,
    input: SimulateAuthorizationAdvice,
  ) {
    await this.cards.getRow(ctx, cardId);
    const total = BigInt(input.amount);
    const at = ctx.clock.now();
    return this.change(ctx.platformId, input.cardTransactionId, cardId, at, function* (row, next) {
      requireStatus(row, ["AUTHORIZED", "PARTIALLY_SETTLED"], "re-sized by an advice");
      if (total < next.settledAmount) {
        throw new ApiError(
          400,
          "INVALID_AMOUNT",
          `${next.settledAmount} of this transaction is settled; it cannot be authorized for less`,
          { details: { settledAmount: Number(next.settledAmount) } },
        );
      }
      next.authorizedAmount = total;
      // A credit authorization holds nothing: only its amount changes.
      if (row.direction === "CREDIT") return [];
      const target = targetOf(row, at);
      const hold = total - next.settledAmount;
      if (hold > next.heldAmount) {
        const more = hold - next.heldAmount;
        const pulled = yield* tryPull(target, more, "CARD_PULL");
        next.pullCount += 1;
        if (pulled) {
          next.pullTotal += more;
          next.heldAmount = hold;
        } else {
          next.status = "EXCEPTION";
        }
        return [{ kind: "PULL", amount: more, status: pulled ? "CONFIRMED" : "FAILED" }];
      }
      if (hold < next.heldAmount) {
        const less = next.heldAmount - hold;
        yield* giveBack(target, less, "CARD_RELEASE");
        next.heldAmount = hold;
        return [{ kind: "RELEASE", amount: less, status: "CONFIRMED" }];
      }
      return [];
    });
  }

  /**
   * A return reversal: the network takes back the latest return of a
   * REFUNDED purchase. Its amount is pulled from the funding source again
   * (a pull in `pullSummary`), the return no longer counts in
   * `refundedAmount` or `refundSummary`, and the transaction is settled
   * again (SETTLED, or PARTIALLY_SETTLED when less was settled than
   * authorized). If the funding source cannot cover it the pull is recorded
   * FAILED and the transaction becomes EXCEPTION.
   */
  async returnReversal(ctx: RequestContext, cardId: string, input: SimulateTransactionRef) {
    await this.cards.getRow(ctx, cardId);
    const at = ctx.clock.now();
    return this.change(ctx.platformId, input.cardTransactionId, cardId, at, function* (row, next) {
      requireStatus(row, ["REFUNDED"], "return-reversed");
      const refund = yield* one(
        q
          .selectFrom("CardTransactionEvent")
          .select(["id", "amount"])
          .where("cardTransactionId", "=", row.id)
          .where("kind", "=", "REFUND")
          .where("status", "=", "CONFIRMED")
          .orderBy("createdAt", "desc")
          .orderBy("id", "desc")
          .limit(1),
      );
      if (!refund) throw new Error(`${row.id} is REFUNDED without a standing refund`);
      yield* run(
        q
          .updateTable("CardTransactionEvent")
          .set({ status: "REVERSED", updatedAt: at })
          .where("id", "=", refund.id),
      );
      const { amount } = refund;
      const pulled = yield* tryPull(targetOf(row, at), amount, "CARD_RETURN_REVERSAL");
      next.refundedAmount -= amount;
      next.refundCount -= 1;
      next.refundTotal -= amount;
      next.pullCount += 1;
      if (pulled) next.pullTotal += amount;
      next.status = pulled ? settledStatus(next) : "EXCEPTION";
      return [{ kind: "PULL", amount, status: pulled ? "CONFIRMED" : "FAILED" }];
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
