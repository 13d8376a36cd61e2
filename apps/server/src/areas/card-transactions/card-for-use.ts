import type { Database } from "../../db/database.js";
import { prepared, q, type Row as RowOf } from "../../db/query.js";
import { notFound } from "../../errors.js";
import type { RequestContext } from "../../http/context.js";
import type { CardService } from "../cards/service.js";

// The card as a new transaction reads it, with the accounts that may fund it.

/** What an authorization reads of its card. */
export interface CardForUse {
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
export interface CardWithAccounts {
  card: CardForUse;
  accounts: RowOf<"InternalAccount">[];
}

/** The card's funding sources that exist, in the card's order. */
export function fundingAccountsOf({
  card,
  accounts,
}: CardWithAccounts): RowOf<"InternalAccount">[] {
  const byId = new Map(accounts.map((account) => [account.id, account]));
  return (JSON.parse(card.fundingSources) as string[]).flatMap((id) => byId.get(id) ?? []);
}

/** The card and its cardholder's accounts, as a new transaction needs them, in one read. */
export async function cardForAuthorization(
  data: Database,
  cards: CardService,
  ctx: RequestContext,
  cardId: string,
): Promise<CardWithAccounts> {
  const rows = await data.all(cardForUse({ cardId, platformId: ctx.platformId }));
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
    const card = await cards.getRow(ctx, cardId);
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
