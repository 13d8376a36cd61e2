import { insertAll, type Row as RowOf } from "../../db/query.js";
import type { SqlInsert } from "../../db/sql.js";
import { emitEvent } from "../../events/outbox.js";
import type { RequestContext, Services } from "../../http/context.js";
import { newId } from "../../ids.js";
import type { CardService } from "../cards/service.js";
import {
  cardAuthorization,
  childRow,
  newTransactionRow,
  type AuthorizationPlan,
} from "./authorization.js";
import { decide, requireCardCurrency, uncovered } from "./authorization-decision.js";
import { cardForAuthorization, fundingAccountsOf, type CardForUse } from "./card-for-use.js";
import { giveBack, targetOf } from "./funding-moves.js";
import type { CreditMessage, SimulateAuthorization, SimulateBalanceInquiry } from "./requests.js";
import {
  EVENT_OF_STATUS,
  toCardTransaction,
  type CardAuthorizationResult,
  type CardTransaction,
  type CardTransactionStatus,
} from "./view.js";

// The simulations that authorize something new: a purchase (and its
// single-message form), a balance inquiry, and the credits to the card.

type Row = RowOf<"CardTransaction">;

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

export class NewCardTransactions {
  constructor(
    private readonly services: Services,
    private readonly cards: CardService,
    private readonly walletPulls: WalletPullSigner,
  ) {}

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
    const read = await cardForAuthorization(this.services.data, this.cards, ctx, cardId);
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
    const read = await cardForAuthorization(this.services.data, this.cards, ctx, cardId);
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
    const read = await cardForAuthorization(this.services.data, this.cards, ctx, cardId);
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
}
