// Steps the delegated key tests share: an embedded wallet funding a card, the
// three signed legs of creating a key, and a purchase on the card. Each
// describe.each block starts its own sandbox, so the steps read it through a
// getter rather than holding one.
import { expect } from "vitest";
import type { Schemas } from "@payments-sandbox/client";
import type { P256KeyPair } from "@payments-sandbox/crypto";
import { createCard, getCard } from "../card-fixtures.js";
import type { TestSandbox } from "../harness.js";
import { fund } from "../money-helpers.js";
import { createWallet, otpLogin, signedHeaders, type SignedChallenge } from "./wallet.js";

export type DelegatedKey = Schemas["DelegatedKey"];
export type CreateBody = Schemas["DelegatedKeyCreateRequest"];
type Headers = { "Service-Wallet-Signature"?: string; "Request-Id"?: string };

export interface Payload {
  organizationId: string;
  parameters: Record<string, string>;
  timestampMs: string;
  type: string;
}

export const payloadOf = (challenge: SignedChallenge) =>
  JSON.parse(challenge.payloadToSign) as Payload;

export function delegatedKeySteps(current: () => TestSandbox) {
  let seq = 0;

  /** An embedded wallet with a signed-in session, funded, funding an ACTIVE USDB card. */
  async function walletCard(amount = 10_000) {
    const wallet = await createWallet(current());
    const { session, key } = await otpLogin(current(), wallet.emailMethodId);
    if (amount > 0) await fund(current().client, wallet.accountId, amount);
    const created = await createCard(current(), {
      cardholderId: wallet.customerId,
      platformCardId: `wallet-card-${++seq}-x`,
      form: "VIRTUAL",
      fundingSources: [wallet.accountId],
    });
    const card = await getCard(current(), created.id);
    expect(card.state).toBe("ACTIVE");
    const body: CreateBody = {
      cardId: card.id,
      internalAccountId: wallet.accountId,
      nickname: "Card payments",
    };
    return { wallet, session, key, card, body };
  }

  function post(body: CreateBody, header: Headers = {}, client = current().client) {
    return client.POST("/auth/delegated-keys", { params: { header }, body });
  }

  /** The first two legs: the key is PENDING, the third challenge is returned. */
  async function pendingKey(body: CreateBody, key: P256KeyPair) {
    const first = await post(body);
    expect(first.response.status).toBe(202);
    const second = await post(
      body,
      signedHeaders(first.data as SignedChallenge, key.privateKeyHex),
    );
    expect(second.response.status).toBe(202);
    return { first: first.data as SignedChallenge, second: second.data as SignedChallenge };
  }

  /** All three legs, each stamped by `key`. */
  async function activeKey(body: CreateBody, key: P256KeyPair): Promise<DelegatedKey> {
    const { second } = await pendingKey(body, key);
    const third = await post(body, signedHeaders(second, key.privateKeyHex));
    expect(third.response.status).toBe(201);
    return third.data as DelegatedKey;
  }

  function purchase(cardId: string, amount: number) {
    return current().client.POST("/sandbox/cards/{id}/simulate/authorization", {
      params: { path: { id: cardId } },
      body: {
        amount,
        currency: { code: "USDB" },
        merchant: { descriptor: "BLUE BOTTLE COFFEE SF", mcc: "5814", country: "US" },
      },
    });
  }

  return { walletCard, post, pendingKey, activeKey, purchase };
}
