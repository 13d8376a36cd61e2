import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceOf, expectDecline } from "./card-fixtures.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { createAccount } from "./money-helpers.js";
import { createWallet, errorOf, signedHeaders, type SignedChallenge } from "./support/wallet.js";
import { delegatedKeySteps, payloadOf, type DelegatedKey } from "./support/delegated-keys.js";

// Delegated keys: the three signed legs that make a card's key, revoking it,
// one per funding source, and tenancy. What a key and its legs may sign is in
// delegated-keys-signing.test.ts.

describe.each(databases)("delegated keys on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const { walletCard, post, pendingKey, activeKey, purchase } = delegatedKeySteps(() => sandbox);

  it("creates an ACTIVE key in three signed legs, after which the card pulls from the wallet", async () => {
    const { wallet, key, card, body } = await walletCard(10_000);

    // Without a delegated key the card cannot draw on the wallet.
    const before = await purchase(card.id, 1_500);
    expect(before.response.status).toBe(202);
    expect(expectDecline(before.data!, card.id).declineReason).toBe("INSUFFICIENT_FUNDS");
    expect(await balanceOf(sandbox, wallet.accountId)).toBe(10_000);

    const first = await post(body);
    expect(first.response.status).toBe(202);
    const leg1 = first.data as SignedChallenge;
    expect(leg1).not.toHaveProperty("type");
    expect(leg1.requestId).toMatch(/^Request:/);
    const p1 = payloadOf(leg1);
    expect(p1.type).toBe("ACTIVITY_TYPE_CREATE_DELEGATED_USER");
    expect(p1.parameters).toMatchObject({
      accountId: wallet.accountId,
      cardId: card.id,
      nickname: "Card payments",
    });
    expect(p1.parameters.fundingSourceId).toMatch(/^CardFundingSource:[0-9a-f-]{36}$/);
    expect(p1.parameters.publicKey).toMatch(/^0[23][0-9a-f]{64}$/);

    // Second leg, stamped with the published stamper: the key exists, PENDING.
    const stamper = new ApiKeyStamper({
      apiPublicKey: key.publicKeyHex,
      apiPrivateKey: key.privateKeyHex,
    });
    const { stampHeaderValue } = await stamper.stamp(leg1.payloadToSign);
    const second = await post(body, {
      "Service-Wallet-Signature": stampHeaderValue,
      "Request-Id": leg1.requestId,
    });
    expect(second.response.status).toBe(202);
    const leg2 = second.data as SignedChallenge;
    expect(leg2.requestId).not.toBe(leg1.requestId);
    const p2 = payloadOf(leg2);
    expect(p2.type).toBe("ACTIVITY_TYPE_CREATE_DELEGATED_POLICY");
    expect(p2.parameters.publicKey).toBe(p1.parameters.publicKey);
    const pendingId = p2.parameters.delegatedKeyId!;
    const pending = await sandbox.client.GET("/auth/delegated-keys/{id}", {
      params: { path: { id: pendingId } },
    });
    expect(pending.data).toMatchObject({ status: "PENDING" });
    expect(expectDecline((await purchase(card.id, 1_500)).data!, card.id)).toMatchObject({
      declineReason: "INSUFFICIENT_FUNDS",
    });

    const third = await post(body, signedHeaders(leg2, key.privateKeyHex));
    expect(third.response.status).toBe(201);
    const created = third.data as DelegatedKey;
    expect(created).toEqual({
      id: pendingId,
      cardId: card.id,
      fundingSourceId: p1.parameters.fundingSourceId,
      accountId: wallet.accountId,
      publicKey: p1.parameters.publicKey,
      nickname: "Card payments",
      status: "ACTIVE",
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });

    const read = await sandbox.client.GET("/auth/delegated-keys/{id}", {
      params: { path: { id: created.id } },
    });
    expect(read.data).toEqual(created);
    const byAccount = await sandbox.client.GET("/auth/delegated-keys", {
      params: { query: { accountId: wallet.accountId } },
    });
    expect(byAccount.data?.data).toEqual([created]);
    const bySource = await sandbox.client.GET("/auth/delegated-keys", {
      params: { query: { fundingSourceId: created.fundingSourceId } },
    });
    expect(bySource.data?.data).toEqual([created]);

    // The key signs the card's pull: the wallet pays.
    const approved = await purchase(card.id, 1_500);
    expect(approved.response.status).toBe(202);
    expect(approved.data).toMatchObject({ status: "AUTHORIZED", accountId: wallet.accountId });
    expect(await balanceOf(sandbox, wallet.accountId)).toBe(8_500);
    // The first test pays for the server's first use of each operation (the
    // validators compile on first use), which on a busy machine takes longer
    // than the default 30 seconds.
  }, 120_000);

  it("revokes a key: the card stops drawing on the wallet at once", async () => {
    const { wallet, key, card, body } = await walletCard(10_000);
    const created = await activeKey(body, key);
    expect((await purchase(card.id, 1_000)).data).toMatchObject({ status: "AUTHORIZED" });

    const revoked = await sandbox.client.DELETE("/auth/delegated-keys/{id}", {
      params: { path: { id: created.id } },
    });
    expect(revoked.response.status).toBe(204);
    const read = await sandbox.client.GET("/auth/delegated-keys/{id}", {
      params: { path: { id: created.id } },
    });
    expect(read.data).toMatchObject({ id: created.id, status: "REVOKED" });

    const declined = await purchase(card.id, 1_000);
    expect(expectDecline(declined.data!, card.id).declineReason).toBe("INSUFFICIENT_FUNDS");
    expect(await balanceOf(sandbox, wallet.accountId)).toBe(9_000);

    const again = await sandbox.client.DELETE("/auth/delegated-keys/{id}", {
      params: { path: { id: created.id } },
    });
    expect(again.response.status).toBe(400);
    expect(errorOf(again).code).toBe("INVALID_INPUT");

    // The funding source is free again: a new key, a new key pair.
    const renewed = await activeKey(body, key);
    expect(renewed.id).not.toBe(created.id);
    expect(renewed.publicKey).not.toBe(created.publicKey);
    expect(renewed.fundingSourceId).toBe(created.fundingSourceId);
    expect((await purchase(card.id, 1_000)).data).toMatchObject({ status: "AUTHORIZED" });
    const listed = await sandbox.client.GET("/auth/delegated-keys", {
      params: { query: { accountId: wallet.accountId, fundingSourceId: created.fundingSourceId } },
    });
    expect(listed.data?.data.map((k) => [k.id, k.status])).toEqual([
      [renewed.id, "ACTIVE"],
      [created.id, "REVOKED"],
    ]);
  });

  it("keeps one ACTIVE key per funding source; an abandoned PENDING key blocks nothing", async () => {
    const { key, body } = await walletCard(0);
    const abandoned = await pendingKey(body, key);
    const pendingId = payloadOf(abandoned.second).parameters.delegatedKeyId!;

    const created = await activeKey({ ...body, nickname: "Second try" }, key);
    expect(created.id).not.toBe(pendingId);

    // While it is ACTIVE, another flow is refused on its first leg...
    const refused = await post(body);
    expect(refused.response.status).toBe(409);
    expect(errorOf(refused).code).toBe("CONFLICT");
    // ... and the abandoned flow cannot be finished.
    const late = await post(body, signedHeaders(abandoned.second, key.privateKeyHex));
    expect(late.response.status).toBe(409);

    // A PENDING key cannot be revoked (it signs nothing to revoke with).
    const pendingRevoke = await sandbox.client.DELETE("/auth/delegated-keys/{id}", {
      params: { path: { id: pendingId } },
    });
    expect(pendingRevoke.response.status).toBe(400);
    expect(errorOf(pendingRevoke).code).toBe("INVALID_INPUT");
  });

  it("lets only one of two flows finishing together make its key ACTIVE", async () => {
    const { key, body } = await walletCard(0);
    const a = await pendingKey(body, key);
    const b = await pendingKey({ ...body, nickname: "Other device" }, key);
    const [ra, rb] = await Promise.all([
      post(body, signedHeaders(a.second, key.privateKeyHex)),
      post({ ...body, nickname: "Other device" }, signedHeaders(b.second, key.privateKeyHex)),
    ]);
    expect([ra.response.status, rb.response.status].sort()).toEqual([201, 409]);
    const listed = await sandbox.client.GET("/auth/delegated-keys", {
      params: { query: { fundingSourceId: payloadOf(a.second).parameters.fundingSourceId } },
    });
    expect(listed.data?.data.map((k) => k.status).sort()).toEqual(["ACTIVE", "PENDING"]);
  });

  it("answers 404 for a card funding source that does not exist, and 400 for bad input", async () => {
    const { wallet, key, body } = await walletCard(0);
    const unknownCard = await post({
      ...body,
      cardId: "Card:00000000-0000-4000-8000-000000000000",
    });
    expect(unknownCard.response.status).toBe(404);
    expect(errorOf(unknownCard).code).toBe("REFERENCE_NOT_FOUND");

    // An account of the customer that is not an embedded wallet.
    const usd = await createAccount(sandbox.client, wallet.customerId, "USD");
    const notWallet = await post({ ...body, internalAccountId: usd.id });
    expect(notWallet.response.status).toBe(404);

    // An embedded wallet that does not fund this card.
    const other = await createWallet(sandbox);
    const unbound = await post({ ...body, internalAccountId: other.accountId });
    expect(unbound.response.status).toBe(404);
    expect(errorOf(unbound).code).toBe("REFERENCE_NOT_FOUND");

    const empty = await post({ ...body, nickname: "" });
    expect(empty.response.status).toBe(400);
    expect(errorOf(empty).code).toBe("INVALID_INPUT");

    const unfiltered = await sandbox.client.GET("/auth/delegated-keys", {});
    expect(unfiltered.response.status).toBe(400);
    expect(errorOf(unfiltered).code).toBe("INVALID_INPUT");
    const nothing = await sandbox.client.GET("/auth/delegated-keys", {
      params: { query: { accountId: "InternalAccount:00000000-0000-4000-8000-000000000000" } },
    });
    expect(nothing.data).toEqual({ data: [] });

    const unknown = await sandbox.client.GET("/auth/delegated-keys/{id}", {
      params: { path: { id: "DelegatedKey:00000000-0000-4000-8000-000000000000" } },
    });
    expect(unknown.response.status).toBe(404);
    expect(errorOf(unknown).code).toBe("REFERENCE_NOT_FOUND");
    const unknownRevoke = await sandbox.client.DELETE("/auth/delegated-keys/{id}", {
      params: { path: { id: "DelegatedKey:00000000-0000-4000-8000-000000000000" } },
    });
    expect(unknownRevoke.response.status).toBe(404);

    // A first leg is checked like the others: nothing was created by any of these.
    const none = await sandbox.client.GET("/auth/delegated-keys", {
      params: { query: { accountId: wallet.accountId } },
    });
    expect(none.data).toEqual({ data: [] });
    expect((await activeKey(body, key)).status).toBe("ACTIVE");
  });

  it("keeps each platform's delegated keys to itself", async () => {
    const { wallet, key, body } = await walletCard(0);
    const created = await activeKey(body, key);
    const other = await sandbox.otherPlatformClient();

    const read = await other.GET("/auth/delegated-keys/{id}", {
      params: { path: { id: created.id } },
    });
    expect(read.response.status).toBe(404);
    const revoke = await other.DELETE("/auth/delegated-keys/{id}", {
      params: { path: { id: created.id } },
    });
    expect(revoke.response.status).toBe(404);
    const listed = await other.GET("/auth/delegated-keys", {
      params: { query: { accountId: wallet.accountId, fundingSourceId: created.fundingSourceId } },
    });
    expect(listed.data).toEqual({ data: [] });
    const create = await post(body, {}, other);
    expect(create.response.status).toBe(404);

    // A challenge of this platform is unknown to the other one.
    const renewed = await sandbox.client.DELETE("/auth/delegated-keys/{id}", {
      params: { path: { id: created.id } },
    });
    expect(renewed.response.status).toBe(204);
    const first = (await post(body)).data as SignedChallenge;
    const crossed = await post(body, signedHeaders(first, key.privateKeyHex), other);
    expect(crossed.response.status).toBe(404);

    const still = await sandbox.client.GET("/auth/delegated-keys/{id}", {
      params: { path: { id: created.id } },
    });
    expect(still.data?.status).toBe("REVOKED");
  });
});
