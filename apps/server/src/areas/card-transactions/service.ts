/**
 * The card network's messages, simulated, for one platform's cards. A
 * message that authorizes something new creates a transaction
 * (new-transactions.ts; the hot path, authorization.ts); every other message
 * changes one, through one versioned change (transaction-change.ts) whose
 * program says what the message does: the clearing (clearing.ts), a return
 * or its reversal (returns.ts), an increment, a reversal or an advice
 * (adjustments.ts), and a pull resolving later (pull-job.ts). Every message
 * names the card first: 404 for another platform's.
 */
import type { RequestContext, Services } from "../../http/context.js";
import type { JobHandlers } from "../../jobs/registry.js";
import type { CardService } from "../cards/service.js";
import { authorizationAdvice, increment, requireIncrementable, reversal } from "./adjustments.js";
import { CARD_PULL_JOB, type CardPullJobPayload } from "./authorization.js";
import { clearing } from "./clearing.js";
import { NewCardTransactions, type WalletPullSigner } from "./new-transactions.js";
import { applyPullResolution } from "./pull-job.js";
import type {
  CreditMessage,
  SimulateAuthorization,
  SimulateAuthorizationAdvice,
  SimulateBalanceInquiry,
  SimulateClearing,
  SimulateIncrement,
  SimulateReturn,
  SimulateReversal,
  SimulateTransactionRef,
} from "./requests.js";
import { refund, returnReversal } from "./returns.js";
import { changeTransaction, type ChangeOp } from "./transaction-change.js";
import type { CardAuthorizationResult, CardTransaction } from "./view.js";

export type {
  CreditMessage,
  SimulateAuthorization,
  SimulateAuthorizationAdvice,
  SimulateBalanceInquiry,
  SimulateClearing,
  SimulateIncrement,
  SimulateReturn,
  SimulateReversal,
  SimulateTransactionRef,
} from "./requests.js";
export type { WalletPullSigner } from "./new-transactions.js";

export class CardTransactionService {
  private readonly created: NewCardTransactions;

  constructor(
    private readonly services: Services,
    private readonly cards: CardService,
    walletPulls: WalletPullSigner,
  ) {
    this.created = new NewCardTransactions(services, cards, walletPulls);
  }

  registerJobs(handlers: JobHandlers): void {
    handlers.register(CARD_PULL_JOB, async (job) => {
      await applyPullResolution(
        this.services.data,
        job.platformId,
        job.payload as CardPullJobPayload,
      );
    });
  }

  /** A purchase's authorization (see NewCardTransactions.authorize). */
  authorize(
    ctx: RequestContext,
    cardId: string,
    input: SimulateAuthorization,
    options: { settle?: boolean } = {},
  ): Promise<CardAuthorizationResult> {
    return this.created.authorize(ctx, cardId, input, options);
  }

  /**
   * A financial (single-message) authorization, such as an ATM withdrawal:
   * the authorization's one guarded pull, which settles the amount at once
   * (SETTLED, one pull, one settlement). Declines as an authorization does;
   * a pull that the sandbox table makes fail leaves it EXCEPTION with the
   * money back on the funding source.
   */
  financialAuthorization(ctx: RequestContext, cardId: string, input: SimulateAuthorization) {
    return this.created.authorize(ctx, cardId, input, { settle: true });
  }

  /** An authorization of 0 (see NewCardTransactions.balanceInquiry). */
  balanceInquiry(
    ctx: RequestContext,
    cardId: string,
    input: SimulateBalanceInquiry,
  ): Promise<CardAuthorizationResult> {
    return this.created.balanceInquiry(ctx, cardId, input);
  }

  /** A credit to the card (see NewCardTransactions.credit). */
  credit(
    ctx: RequestContext,
    cardId: string,
    input: SimulateAuthorization,
    message: CreditMessage,
  ): Promise<CardAuthorizationResult> {
    return this.created.credit(ctx, cardId, input, message);
  }

  async clear(ctx: RequestContext, cardId: string, input: SimulateClearing) {
    await this.cards.getRow(ctx, cardId);
    const cleared = BigInt(input.amount);
    const at = ctx.clock.now();
    return this.change(ctx, input.cardTransactionId, cardId, at, clearing(cleared, at));
  }

  async refund(ctx: RequestContext, cardId: string, input: SimulateReturn) {
    await this.cards.getRow(ctx, cardId);
    const amount = BigInt(input.amount);
    const at = ctx.clock.now();
    return this.change(ctx, input.cardTransactionId, cardId, at, refund(amount, at));
  }

  async increment(ctx: RequestContext, cardId: string, input: SimulateIncrement) {
    requireIncrementable(await this.cards.getRow(ctx, cardId));
    const amount = BigInt(input.amount);
    const at = ctx.clock.now();
    return this.change(ctx, input.cardTransactionId, cardId, at, increment(amount, at));
  }

  async reverse(ctx: RequestContext, cardId: string, input: SimulateReversal) {
    await this.cards.getRow(ctx, cardId);
    const at = ctx.clock.now();
    return this.change(ctx, input.cardTransactionId, cardId, at, reversal(input, at));
  }

  async authorizationAdvice(
    ctx: RequestContext,
    cardId: string,
    input: SimulateAuthorizationAdvice,
  ) {
    await this.cards.getRow(ctx, cardId);
    const total = BigInt(input.amount);
    const at = ctx.clock.now();
    return this.change(ctx, input.cardTransactionId, cardId, at, authorizationAdvice(total, at));
  }

  async returnReversal(ctx: RequestContext, cardId: string, input: SimulateTransactionRef) {
    await this.cards.getRow(ctx, cardId);
    const at = ctx.clock.now();
    return this.change(ctx, input.cardTransactionId, cardId, at, returnReversal(at));
  }

  /** One change to the card's transaction `id` (see transaction-change.ts). */
  private change(
    ctx: RequestContext,
    id: string,
    cardId: string,
    at: Date,
    op: ChangeOp,
  ): Promise<CardTransaction> {
    return changeTransaction(this.services.data, ctx.platformId, id, cardId, at, op);
  }
}
