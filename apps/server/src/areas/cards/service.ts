import { randomBytes } from "node:crypto";
import type { Schemas } from "@payments-sandbox/client";
import { cardFundingSourceOutcome, cardIssuanceOutcome } from "@payments-sandbox/sandbox-rules";
import { insert, one, q } from "../../db/query.js";
import { emitEvent } from "../../events/outbox.js";
import { ApiError, fieldError, invalidInput, notFound } from "../../errors.js";
import type { Query } from "../../http/operation-types.js";
import type { RequestContext, Services } from "../../http/context.js";
import { countedPage, decodeCursor, pageInOrder, type Page } from "../../http/pagination.js";
import { newId } from "../../ids.js";
import { linkDigest, newLinkToken } from "../../http/link-tokens.js";
import { scheduleJob } from "../../jobs/schedule.js";
import type { PlatformClocks } from "../../platform/platform-clock.js";
import type { CustomerService } from "../customers/service.js";
import {
  applyDueIssuance,
  CARD_ISSUANCE_JOB,
  hasDueIssuance,
  planIssuance,
  type CardIssuanceJobPayload,
} from "./issuance.js";
import { testCardDetails, type TestCardDetails } from "./test-card-details.js";
import { fundingSourcesOf, toCard, type Card, type CardRow } from "./view.js";

export type CardCreate = Schemas["CardCreateRequest"];
export type CardUpdate = Schemas["CardUpdateRequest"];
export type CardReveal = Schemas["CardReveal"];

/** The query of listCards, as validated. */
export type CardFilter = Query<"listCards">;

/** Sandbox cards are Visa; the number itself is a test number (see test-card-details.ts). */
const CARD_BRAND = "VISA";
const CARD_VALIDITY_YEARS = 3;
/** How long a reveal URL stays usable, in sandbox time. */
export const REVEAL_TTL_SECONDS = 300;
/** Allowed PATCH state changes: ACTIVE ⇄ FROZEN, ACTIVE|FROZEN → CLOSED. */
const TRANSITIONS: Record<string, readonly string[]> = {
  ACTIVE: ["FROZEN", "CLOSED"],
  FROZEN: ["ACTIVE", "CLOSED"],
};

export type RevealResult =
  | { kind: "SHOWN"; details: TestCardDetails; last4: string }
  | { kind: "GONE" }
  | { kind: "UNKNOWN" };

/** What the live contract answers when a CLOSED card is asked to change. */
function closedCardRefusal(patch: CardUpdate): ApiError {
  if (patch.state === "CLOSED") {
    return new ApiError(409, "CARD_ALREADY_CLOSED", "The card is already CLOSED");
  }
  if (patch.state !== undefined) {
    return new ApiError(
      409,
      "INVALID_STATE_TRANSITION",
      `A CLOSED card cannot become ${patch.state}`,
      {
        details: { state: "CLOSED", requested: patch.state },
      },
    );
  }
  return new ApiError(409, "CARD_NOT_MUTABLE", "A CLOSED card can no longer be changed");
}

export class CardService {
  constructor(
    private readonly services: Services,
    private readonly customers: CustomerService,
    private readonly clocks: PlatformClocks,
    /** The server's public origin, for links (known once it listens). */
    private readonly origin: () => string,
  ) {}

  async create(ctx: RequestContext, input: CardCreate): Promise<Card> {
    const holder = await this.customers.referencedIn(ctx, "body.cardholderId", input.cardholderId);
    // A business holder is verified by KYB, an individual by KYC.
    const [field, status] =
      holder.customerType === "BUSINESS"
        ? (["kybStatus", holder.kybStatus] as const)
        : (["kycStatus", holder.kycStatus] as const);
    if (status !== "APPROVED") {
      throw new ApiError(
        400,
        "CARDHOLDER_KYC_NOT_APPROVED",
        `The cardholder must have ${field} APPROVED; it is ${status ?? "not set"}`,
        { details: { cardholderId: holder.id, [field]: status } },
      );
    }
    const currency = await this.checkFundingSources(ctx, holder.id, input.fundingSources);
    const issuance = cardIssuanceOutcome({
      platformCardId: input.platformCardId,
      cardholderId: input.cardholderId,
    });
    const now = ctx.clock.now();
    const realNow = this.services.clock.now();
    const steps = planIssuance(issuance.outcome.steps, now);
    const id = newId("Card");
    const row: CardRow = {
      id,
      platformId: ctx.platformId,
      cardholderId: holder.id,
      platformCardId: input.platformCardId ?? null,
      state: "PROCESSING",
      stateReason: null,
      brand: CARD_BRAND,
      form: input.form,
      last4: issuance.last4,
      expMonth: now.getUTCMonth() + 1,
      expYear: now.getUTCFullYear() + CARD_VALIDITY_YEARS,
      fundingSources: JSON.stringify(input.fundingSources),
      maxSpendPerTransaction:
        input.maxSpendPerTransaction === undefined ? null : BigInt(input.maxSpendPerTransaction),
      currency,
      processorRef: `proc_${randomBytes(6).toString("hex")}`,
      issuerRef: `iss_${randomBytes(4).readUInt32BE(0).toString().padStart(10, "0")}`,
      pendingIssuance: steps.length > 0 ? JSON.stringify(steps) : null,
      version: 0,
      createdAt: now,
      updatedAt: now,
    };
    await this.services.data.transaction(function* () {
      yield* insert("Card", row);
      for (const [i, step] of issuance.outcome.steps.entries()) {
        const payload: CardIssuanceJobPayload = { cardId: id, through: steps[i]!.at };
        yield* scheduleJob({
          platformId: ctx.platformId,
          kind: CARD_ISSUANCE_JOB,
          payload,
          delaySeconds: step.afterSeconds,
          now: realNow,
        });
      }
    });
    return toCard(row);
  }

  /**
   * The card row of this platform, with any issuance step that is already due
   * applied first (so reads and simulations see the state the card has now).
   */
  async getRow(ctx: RequestContext, id: string): Promise<CardRow> {
    const row = await this.services.data.one(
      q
        .selectFrom("Card")
        .selectAll()
        .where("id", "=", id)
        .where("platformId", "=", ctx.platformId),
    );
    if (!row) throw notFound("REFERENCE_NOT_FOUND", `Card ${id} not found`);
    return this.caughtUp(row, ctx.clock.now());
  }

  private async caughtUp(row: CardRow, now: Date): Promise<CardRow> {
    return hasDueIssuance(row, now) ? applyDueIssuance(this.services.data, row, now) : row;
  }

  async get(ctx: RequestContext, id: string): Promise<Card> {
    return toCard(await this.getRow(ctx, id));
  }

  async list(
    ctx: RequestContext,
    filter: CardFilter,
  ): Promise<Page<Card> & { totalCount: number }> {
    const now = ctx.clock.now();
    // Catch up first, so a state filter sees the state each card has now.
    let cards = q.selectFrom("Card").where("platformId", "=", ctx.platformId);
    if (filter.cardholderId) cards = cards.where("cardholderId", "=", filter.cardholderId);
    if (filter.platformCardId) cards = cards.where("platformCardId", "=", filter.platformCardId);
    // fundingSources is a JSON array of ids: a quoted id is one element.
    if (filter.accountId) cards = cards.where("fundingSources", "like", `%"${filter.accountId}"%`);
    const due = await this.services.data.all(
      cards.selectAll().where("pendingIssuance", "is not", null),
    );
    for (const row of due) await this.caughtUp(row, now);
    if (filter.state) cards = cards.where("state", "=", filter.state);
    return countedPage(
      this.services.data,
      {
        rows: cards
          .selectAll()
          .$call(pageInOrder(filter.sortOrder, decodeCursor(filter.cursor), filter.limit)),
        count: cards.select((eb) => eb.fn.countAll().as("count")),
      },
      filter.limit,
      toCard,
    );
  }

  async update(ctx: RequestContext, id: string, patch: CardUpdate): Promise<Card> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const row = await this.getRow(ctx, id);
      if (row.state === "CLOSED") throw closedCardRefusal(patch);
      const stateChange = patch.state !== undefined;
      if (stateChange && !(TRANSITIONS[row.state] ?? []).includes(patch.state!)) {
        throw new ApiError(
          409,
          "INVALID_STATE_TRANSITION",
          `A ${row.state} card cannot become ${patch.state}`,
          { details: { state: row.state, requested: patch.state } },
        );
      }
      const limitChange =
        patch.maxSpendPerTransaction !== undefined &&
        (patch.maxSpendPerTransaction === null ? null : BigInt(patch.maxSpendPerTransaction)) !==
          row.maxSpendPerTransaction;
      const current = fundingSourcesOf(row);
      const sourcesChange =
        patch.fundingSources !== undefined &&
        JSON.stringify(patch.fundingSources) !== JSON.stringify(current);
      if (sourcesChange) {
        const currency = await this.checkFundingSources(
          ctx,
          row.cardholderId,
          patch.fundingSources!,
        );
        if (currency !== row.currency) {
          throw new ApiError(
            400,
            "INVALID_CURRENCY",
            `The new funding sources hold ${currency} but the card is in ${row.currency}`,
            { details: { cardCurrency: row.currency, accountCurrency: currency } },
          );
        }
      }
      const now = ctx.clock.now();
      const updated = await this.services.data.transaction(function* () {
        const changed = yield* one(
          q
            .updateTable("Card")
            .set((eb) => ({
              ...(stateChange
                ? {
                    state: patch.state!,
                    stateReason: patch.state === "CLOSED" ? "CLOSED_BY_PLATFORM" : null,
                  }
                : {}),
              ...(sourcesChange ? { fundingSources: JSON.stringify(patch.fundingSources) } : {}),
              ...(limitChange
                ? {
                    maxSpendPerTransaction:
                      patch.maxSpendPerTransaction === null
                        ? null
                        : BigInt(patch.maxSpendPerTransaction!),
                  }
                : {}),
              updatedAt: now,
              version: eb("version", "+", 1),
            }))
            .where("id", "=", id)
            .where("platformId", "=", ctx.platformId)
            .where("version", "=", row.version)
            .returningAll(),
        );
        if (!changed) return undefined;
        const card = toCard(changed);
        const base = { platformId: ctx.platformId, objectId: id, data: card, at: now };
        if (stateChange) yield* emitEvent({ ...base, type: "CARD.STATE_CHANGE" });
        if (sourcesChange) yield* emitEvent({ ...base, type: "CARD.FUNDING_SOURCE_CHANGE" });
        return card;
      });
      if (updated) return updated;
    }
    throw new ApiError(409, "CONFLICT", "The card kept changing concurrently; retry the request");
  }

  async reveal(ctx: RequestContext, id: string): Promise<CardReveal> {
    const row = await this.getRow(ctx, id);
    if (row.state !== "ACTIVE" && row.state !== "FROZEN") {
      throw new ApiError(
        403,
        "FORBIDDEN",
        `Only an ACTIVE or FROZEN card can be revealed; this one is ${row.state}`,
      );
    }
    const { token, digest } = newLinkToken();
    const now = ctx.clock.now();
    const expiresAt = new Date(now.getTime() + REVEAL_TTL_SECONDS * 1000);
    await this.services.data.execute(
      q.insertInto("CardRevealToken").values({
        id: digest,
        platformId: ctx.platformId,
        cardId: row.id,
        expiresAt,
        usedAt: null,
        createdAt: now,
      }),
    );
    return {
      panEmbedUrl: `${this.origin()}/card-reveal/${token}`,
      expiresAt: expiresAt.toISOString(),
    };
  }

  /** Uses up a reveal token: the card's details once, then GONE. */
  async openReveal(token: string): Promise<RevealResult> {
    const digest = linkDigest(token);
    if (digest === undefined) return { kind: "UNKNOWN" };
    const db = this.services.data;
    const row = await db.one(q.selectFrom("CardRevealToken").selectAll().where("id", "=", digest));
    if (!row) return { kind: "UNKNOWN" };
    const now = (await this.clocks.forPlatform(row.platformId)).now();
    // Single use: only one opener wins this conditional update.
    const count = await db.execute(
      q
        .updateTable("CardRevealToken")
        .set({ usedAt: now })
        .where("id", "=", digest)
        .where("usedAt", "is", null)
        .where("expiresAt", ">", now),
    );
    if (count !== 1) return { kind: "GONE" };
    const card = await db.one(
      q
        .selectFrom("Card")
        .selectAll()
        .where("id", "=", row.cardId)
        .where("platformId", "=", row.platformId),
    );
    if (!card) return { kind: "GONE" };
    return { kind: "SHOWN", details: testCardDetails(card), last4: card.last4 };
  }

  /**
   * Funding sources must be the cardholder's own internal accounts, eligible
   * by the sandbox table, all in the card's currency. Returns that currency.
   */
  private async checkFundingSources(
    ctx: RequestContext,
    cardholderId: string,
    ids: readonly string[],
  ): Promise<string> {
    const accounts =
      ids.length === 0
        ? []
        : await this.services.data.all(
            q
              .selectFrom("InternalAccount")
              .selectAll()
              .where("id", "in", [...ids])
              .where("platformId", "=", ctx.platformId),
          );
    const byId = new Map(accounts.map((a) => [a.id, a]));
    let cardCurrency: string | undefined;
    for (const accountId of ids) {
      const account = byId.get(accountId);
      if (!account) {
        throw invalidInput(`No internal account ${accountId}`, {
          errors: [fieldError("body.fundingSources", `no internal account ${accountId}`)],
        });
      }
      const ineligible = (reason: string) =>
        new ApiError(
          400,
          "FUNDING_SOURCE_INELIGIBLE",
          `${accountId} cannot fund this card: ${reason}`,
          {
            details: { accountId },
          },
        );
      if (account.customerId !== cardholderId) {
        throw ineligible("it belongs to another customer than the cardholder");
      }
      const rule = cardFundingSourceOutcome(accountId).outcome;
      if (rule.kind === "REJECT") {
        throw new ApiError(rule.status, rule.errorCode, rule.message, { details: { accountId } });
      }
      if (account.status !== "ACTIVE") throw ineligible(`the account is ${account.status}`);
      cardCurrency ??= account.currency;
      if (account.currency !== cardCurrency) {
        throw new ApiError(
          400,
          "INVALID_CURRENCY",
          `${accountId} holds ${account.currency} but the card is in ${cardCurrency}`,
          { details: { accountId, accountCurrency: account.currency, cardCurrency } },
        );
      }
    }
    return cardCurrency!;
  }
}
