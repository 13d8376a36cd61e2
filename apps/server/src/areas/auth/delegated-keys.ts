// Delegated keys (/auth/delegated-keys): a P-256 key the sandbox makes and
// keeps for one card funding source (a card and the embedded wallet it draws
// on), so that the card's pulls from the wallet are signed without the user's
// session. The user grants it in three legs, each a signed retry by a session
// of the wallet: the first call names the new key, the second leg records it
// PENDING, the third makes it ACTIVE. An ACTIVE key signs what
// DELEGATED_KEY_SCOPE allows and nothing else; its stamps go through the one
// verifier (SignedRequests.verifyDelegated), which finds only ACTIVE keys, so
// a revoked key stops at once.
import type { Schemas } from "@payments-sandbox/client";
import { generateP256KeyPair } from "../../crypto/p256-keys.js";
import { sha256Hex } from "../../crypto/sha256.js";
import { serverStamp } from "../../crypto/stamps.js";
import { isUniqueViolation } from "../../db/errors.js";
import { insert, one, q, run, type Row } from "../../db/query.js";
import { ApiError, fieldError, invalidInput, notFound } from "../../errors.js";
import type { RequestContext, Services } from "../../http/context.js";
import type { Query } from "../../http/operation-types.js";
import { newId } from "../../ids.js";
import { Activity, type DelegatedScope } from "../../signing/activities.js";
import { challengeData, payloadToSign } from "../../signing/challenges.js";
import { isFirstLeg, type WalletHeaders } from "../../signing/headers.js";
import type { ChallengeBody, SignedRequests } from "../../signing/signed-requests.js";
import type { CardService } from "../cards/service.js";
import type { InternalAccountService } from "../internal-accounts/service.js";

export type DelegatedKey = Schemas["DelegatedKey"];
export type DelegatedKeyCreate = Schemas["DelegatedKeyCreateRequest"];
export type DelegatedKeyFilter = Query<"listDelegatedKeys">;
type KeyRow = Row<"DelegatedKey">;
type KeyStatus = Schemas["DelegatedKeyStatus"];

/**
 * The id of a card funding source: the pair (card, account) named as one id,
 * `CardFundingSource:<uuid>`, the same for the same pair. The UUID is the
 * first 128 bits of SHA-256 of the pair, marked as version 8 (RFC 9562,
 * custom) so it is never mistaken for a random one.
 */
export function cardFundingSourceId(cardId: string, accountId: string): string {
  const hex = sha256Hex(`${cardId}\n${accountId}`).slice(0, 32).split("");
  hex[12] = "8";
  hex[16] = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  const h = hex.join("");
  return `CardFundingSource:${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export function toDelegatedKey(row: KeyRow): DelegatedKey {
  return {
    id: row.id,
    cardId: row.cardId,
    fundingSourceId: row.fundingSourceId,
    accountId: row.accountId,
    publicKey: row.publicKey,
    nickname: row.nickname,
    status: row.status as KeyStatus,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** A card pull the sandbox asks a delegated key to sign. */
export interface CardPayment {
  cardId: string;
  accountId: string;
  amount: bigint;
  currency: string;
  merchantDescriptor: string;
}

interface FundingSource {
  cardId: string;
  accountId: string;
  fundingSourceId: string;
}

const keyNotFound = () => notFound("REFERENCE_NOT_FOUND", "No delegated key with this id.");
const activeExists = () =>
  new ApiError(409, "CONFLICT", "This card funding source already has an ACTIVE delegated key.");

export class DelegatedKeyService {
  constructor(
    private readonly services: Services,
    private readonly signing: SignedRequests,
    private readonly cards: CardService,
    private readonly accounts: InternalAccountService,
  ) {}

  /**
   * The three legs of creation, told apart by the challenge the Request-Id
   * names: none (first call) → 202; a CREATE_DELEGATED_USER challenge → the
   * key is recorded PENDING, 202 again; a CREATE_DELEGATED_POLICY challenge
   * → the key is ACTIVE, 201. Every leg checks the body again and must repeat it.
   */
  async create(
    ctx: RequestContext,
    headers: WalletHeaders,
    body: DelegatedKeyCreate,
  ): Promise<{ status: 202; body: ChallengeBody } | { status: 201; body: DelegatedKey }> {
    const source = await this.fundingSource(ctx, body.cardId, body.internalAccountId);
    await this.requireNoActiveKey(ctx, source.fundingSourceId);
    const binding = {
      cardId: body.cardId,
      internalAccountId: body.internalAccountId,
      nickname: body.nickname,
    };
    const parameters = {
      accountId: source.accountId,
      cardId: source.cardId,
      fundingSourceId: source.fundingSourceId,
      nickname: body.nickname,
    };

    if (isFirstLeg(headers)) {
      const key = generateP256KeyPair();
      const challenge = await this.signing.issue(ctx, {
        activity: Activity.CREATE_DELEGATED_USER,
        accountId: source.accountId,
        parameters: { ...parameters, publicKey: key.publicKeyHex },
        binding,
        data: { publicKey: key.publicKeyHex, privateKey: key.privateKeyHex },
      });
      return { status: 202, body: challenge };
    }

    const activity = await this.legOf(ctx, headers);
    const approval = await this.signing.approve(ctx, headers, {
      activity,
      accountId: source.accountId,
      binding,
    });
    const signing = this.signing;
    const now = ctx.clock.now();

    if (activity === Activity.CREATE_DELEGATED_USER) {
      const { publicKey, privateKey } = challengeData<{ publicKey: string; privateKey: string }>(
        approval.challenge,
      );
      const next = await this.services.data.transaction(function* () {
        yield* signing.consume(ctx, approval);
        const row: KeyRow = {
          id: newId("DelegatedKey"),
          platformId: ctx.platformId,
          cardId: source.cardId,
          fundingSourceId: source.fundingSourceId,
          accountId: source.accountId,
          publicKey,
          privateKey,
          nickname: body.nickname,
          status: "PENDING",
          activeFundingSourceId: null,
          createdAt: now,
          updatedAt: now,
        };
        yield* insert("DelegatedKey", row);
        return yield* signing.challengeStep(ctx, {
          activity: Activity.CREATE_DELEGATED_POLICY,
          accountId: source.accountId,
          parameters: { ...parameters, delegatedKeyId: row.id, publicKey },
          binding,
          data: { delegatedKeyId: row.id },
        });
      });
      return {
        status: 202,
        body: {
          payloadToSign: next.payload,
          requestId: next.id,
          expiresAt: next.expiresAt.toISOString(),
        },
      };
    }

    const { delegatedKeyId } = challengeData<{ delegatedKeyId: string }>(approval.challenge);
    try {
      const row = await this.services.data.transaction(function* () {
        yield* signing.consume(ctx, approval);
        const activated = yield* one(
          q
            .updateTable("DelegatedKey")
            .set({
              status: "ACTIVE",
              activeFundingSourceId: source.fundingSourceId,
              updatedAt: now,
            })
            .where("id", "=", delegatedKeyId)
            .where("platformId", "=", ctx.platformId)
            .where("status", "=", "PENDING")
            .returningAll(),
        );
        if (!activated) throw keyNotFound();
        return activated;
      });
      return { status: 201, body: toDelegatedKey(row) };
    } catch (err) {
      // Another key of this funding source became ACTIVE since this one was checked.
      if (isUniqueViolation(err)) throw activeExists();
      throw err;
    }
  }

  async list(ctx: RequestContext, filter: DelegatedKeyFilter): Promise<{ data: DelegatedKey[] }> {
    if (filter.accountId === undefined && filter.fundingSourceId === undefined) {
      throw invalidInput("accountId or fundingSourceId is required", {
        errors: [fieldError("query", "give accountId, fundingSourceId or both")],
      });
    }
    let rows = q.selectFrom("DelegatedKey").selectAll().where("platformId", "=", ctx.platformId);
    if (filter.accountId !== undefined) rows = rows.where("accountId", "=", filter.accountId);
    if (filter.fundingSourceId !== undefined) {
      rows = rows.where("fundingSourceId", "=", filter.fundingSourceId);
    }
    const data = await this.services.data.all(
      rows.orderBy("createdAt", "desc").orderBy("id", "desc"),
    );
    return { data: data.map(toDelegatedKey) };
  }

  async get(ctx: RequestContext, id: string): Promise<DelegatedKey> {
    return toDelegatedKey(await this.row(ctx, id));
  }

  /**
   * Revokes an ACTIVE key. The key signs its own revocation (the scope it was
   * granted), checked by the one verifier; then it is REVOKED and every later
   * stamp of it is refused.
   */
  async revoke(ctx: RequestContext, id: string): Promise<void> {
    const key = await this.row(ctx, id);
    if (key.status !== "ACTIVE") {
      throw invalidInput(`Only an ACTIVE delegated key can be revoked; this one is ${key.status}.`);
    }
    await this.signAndVerify(
      ctx,
      key,
      {
        activity: Activity.DELETE_DELEGATED_USER,
        accountId: key.accountId,
        delegatedKeyId: key.id,
      },
      { delegatedKeyId: key.id },
    );
    const now = ctx.clock.now();
    const count = await this.services.data.transaction(function* () {
      return yield* run(
        q
          .updateTable("DelegatedKey")
          .set({ status: "REVOKED", activeFundingSourceId: null, updatedAt: now })
          .where("id", "=", key.id)
          .where("platformId", "=", ctx.platformId)
          .where("status", "=", "ACTIVE"),
      );
    });
    if (count !== 1) {
      throw invalidInput("Only an ACTIVE delegated key can be revoked; this one is REVOKED.");
    }
  }

  /**
   * Whether the card may pull `payment` from an embedded wallet: its funding
   * source's ACTIVE delegated key signs the payment, and the stamp passes the
   * one verifier. No ACTIVE key, or a stamp refused → false: the card does
   * not draw on this wallet.
   */
  async authorizeCardPayment(ctx: RequestContext, payment: CardPayment): Promise<boolean> {
    const fundingSourceId = cardFundingSourceId(payment.cardId, payment.accountId);
    const key = await this.services.data.one(
      q
        .selectFrom("DelegatedKey")
        .selectAll()
        .where("platformId", "=", ctx.platformId)
        .where("activeFundingSourceId", "=", fundingSourceId),
    );
    if (!key) return false;
    try {
      await this.signAndVerify(
        ctx,
        key,
        { activity: Activity.SIGN_CARD_PAYMENT, accountId: key.accountId, fundingSourceId },
        {
          accountId: payment.accountId,
          amount: String(payment.amount),
          cardId: payment.cardId,
          currency: payment.currency,
          fundingSourceId,
          merchantDescriptor: payment.merchantDescriptor,
        },
      );
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return false;
      throw err;
    }
  }

  /** The key stamps the action's payload, and the verifier checks the stamp against the scope. */
  private async signAndVerify(
    ctx: RequestContext,
    key: KeyRow,
    scope: DelegatedScope,
    parameters: Record<string, unknown>,
  ): Promise<void> {
    const payload = payloadToSign(ctx.platformId, scope.activity, parameters, ctx.clock.now());
    await this.signing.verifyDelegated(ctx, serverStamp(payload, key.privateKey), payload, scope);
  }

  private async row(ctx: RequestContext, id: string): Promise<KeyRow> {
    const row = await this.services.data.one(
      q
        .selectFrom("DelegatedKey")
        .selectAll()
        .where("id", "=", id)
        .where("platformId", "=", ctx.platformId),
    );
    if (!row) throw keyNotFound();
    return row;
  }

  /** The card funding source (card, embedded wallet) of the request: each must exist, and be bound. */
  private async fundingSource(
    ctx: RequestContext,
    cardId: string,
    accountId: string,
  ): Promise<FundingSource> {
    const card = await this.cards.getRow(ctx, cardId);
    const account = await this.accounts.getRow(ctx, accountId);
    if (account.type !== "EMBEDDED_WALLET") {
      throw notFound("REFERENCE_NOT_FOUND", `${accountId} is not an embedded wallet.`);
    }
    const sources = JSON.parse(card.fundingSources) as string[];
    if (!sources.includes(account.id)) {
      throw notFound(
        "REFERENCE_NOT_FOUND",
        "The internal account is not a funding source of this card.",
      );
    }
    return {
      cardId: card.id,
      accountId: account.id,
      fundingSourceId: cardFundingSourceId(card.id, account.id),
    };
  }

  private async requireNoActiveKey(ctx: RequestContext, fundingSourceId: string): Promise<void> {
    const active = await this.services.data.one(
      q
        .selectFrom("DelegatedKey")
        .select("id")
        .where("platformId", "=", ctx.platformId)
        .where("activeFundingSourceId", "=", fundingSourceId),
    );
    if (active) throw activeExists();
  }

  /** The leg a retry answers: the activity of the challenge its Request-Id names. */
  private async legOf(ctx: RequestContext, headers: WalletHeaders): Promise<string> {
    if (headers.requestId !== undefined) {
      const challenge = await this.services.data.one(
        q
          .selectFrom("SignedChallenge")
          .select("activity")
          .where("id", "=", headers.requestId)
          .where("platformId", "=", ctx.platformId),
      );
      if (challenge?.activity === Activity.CREATE_DELEGATED_POLICY) return challenge.activity;
    }
    // Anything else is checked as the second leg: the verifier says why it is refused.
    return Activity.CREATE_DELEGATED_USER;
  }
}
