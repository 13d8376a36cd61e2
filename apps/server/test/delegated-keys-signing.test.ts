import { createStamp, generateP256KeyPair } from "@payments-sandbox/crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../src/clock.js";
import { loadAuthConfig } from "../src/config.js";
import { serverStamp } from "../src/crypto/stamps.js";
import { q } from "../src/db/query.js";
import type { RequestContext } from "../src/http/context.js";
import { Activity, type DelegatedScope } from "../src/signing/activities.js";
import { payloadToSign } from "../src/signing/challenges.js";
import { SignedRequests } from "../src/signing/signed-requests.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  createWallet,
  errorOf,
  otpLogin,
  signedHeaders,
  type SignedChallenge,
} from "./support/wallet.js";
import { delegatedKeySteps } from "./support/delegated-keys.js";

// Delegated keys: which stamps the legs take, and what an ACTIVE key may sign.

describe.each(databases)("delegated keys on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const { walletCard, post, activeKey } = delegatedKeySteps(() => sandbox);

  it("refuses retries that are not the wallet's, not the same request, or replayed", async () => {
    const { key, body } = await walletCard(0);
    const first = (await post(body)).data as SignedChallenge;

    const missing = await post(body, { "Request-Id": first.requestId });
    expect(missing.response.status).toBe(401);
    expect(errorOf(missing).code).toBe("WALLET_SIGNATURE_MISSING");
    const noId = await post(body, {
      "Service-Wallet-Signature": createStamp(first.payloadToSign, key.privateKeyHex),
    });
    expect(errorOf(noId).code).toBe("REQUEST_ID_MISSING");
    const malformed = await post(body, {
      "Service-Wallet-Signature": "not-a-stamp",
      "Request-Id": first.requestId,
    });
    expect(errorOf(malformed).code).toBe("WALLET_SIGNATURE_MALFORMED");

    // A body other than the first leg's.
    const mismatch = await post(
      { ...body, nickname: "Something else" },
      signedHeaders(first, key.privateKeyHex),
    );
    expect(mismatch.response.status).toBe(401);
    expect(errorOf(mismatch).code).toBe("WALLET_SIGNATURE_BODY_MISMATCH");

    // A valid stamp by a key that is no session of this wallet.
    const foreign = await post(body, signedHeaders(first, generateP256KeyPair().privateKeyHex));
    expect(foreign.response.status).toBe(401);
    expect(errorOf(foreign)).toMatchObject({
      code: "WALLET_SIGNATURE_INVALID",
      reason: "Signer is not an active session key of this wallet",
    });
    // A session of another wallet.
    const other = await createWallet(sandbox);
    const otherLogin = await otpLogin(sandbox, other.emailMethodId);
    const otherSession = await post(body, signedHeaders(first, otherLogin.key.privateKeyHex));
    expect(errorOf(otherSession).code).toBe("WALLET_SIGNATURE_INVALID");

    // None of that used the challenge; the real retry goes through, once.
    const second = await post(body, signedHeaders(first, key.privateKeyHex));
    expect(second.response.status).toBe(202);
    const replay = await post(body, signedHeaders(first, key.privateKeyHex));
    expect(replay.response.status).toBe(401);
    expect(errorOf(replay)).toMatchObject({
      code: "UNAUTHORIZED",
      reason: "Request-Id already consumed",
    });
    const third = await post(
      body,
      signedHeaders(second.data as SignedChallenge, key.privateKeyHex),
    );
    expect(third.response.status).toBe(201);
    const replayThird = await post(
      body,
      signedHeaders(second.data as SignedChallenge, key.privateKeyHex),
    );
    expect(replayThird.response.status).toBe(409);
    // The file's first test also compiles each operation's checks on first use.
  }, 90_000);

  it("refuses a stamp by a revoked session", async () => {
    const { key, session, body } = await walletCard(0);
    const first = (await post(body)).data as SignedChallenge;
    const revoke = await sandbox.client.DELETE("/auth/sessions/{id}", {
      params: { path: { id: session.id } },
    });
    const revoked = await sandbox.client.DELETE("/auth/sessions/{id}", {
      params: {
        path: { id: session.id },
        header: signedHeaders(revoke.data as SignedChallenge, key.privateKeyHex),
      },
    });
    expect(revoked.response.status).toBe(204);
    const res = await post(body, signedHeaders(first, key.privateKeyHex));
    expect(res.response.status).toBe(401);
    expect(errorOf(res).code).toBe("WALLET_SIGNATURE_INVALID");
  });

  it("a delegated key signs nothing outside its scope, even if its private half leaked", async () => {
    const { wallet, key, body } = await walletCard(0);
    const created = await activeKey(body, key);
    // The sandbox never returns the private half; a test reads it to prove
    // that even the key itself cannot sign the wallet's session actions.
    const row = await sandbox.server.data.one(
      q.selectFrom("DelegatedKey").select("privateKey").where("id", "=", created.id),
    );
    const leaked = row!.privateKey;

    const exportBody = { clientPublicKey: generateP256KeyPair().publicKeyUncompressedHex };
    const exportChallenge = await sandbox.client.POST("/internal-accounts/{id}/export", {
      params: { path: { id: wallet.accountId } },
      body: exportBody,
    });
    expect(exportChallenge.response.status).toBe(202);
    const exported = await sandbox.client.POST("/internal-accounts/{id}/export", {
      params: {
        path: { id: wallet.accountId },
        header: signedHeaders(exportChallenge.data as SignedChallenge, leaked),
      },
      body: exportBody,
    });
    expect(exported.response.status).toBe(401);
    expect(errorOf(exported)).toMatchObject({
      code: "WALLET_SIGNATURE_INVALID",
      reason: "Signer is a delegated key, which cannot sign this action",
    });

    // Nor a further delegated key.
    await sandbox.client.DELETE("/auth/delegated-keys/{id}", {
      params: { path: { id: created.id } },
    });
    const first = (await post(body)).data as SignedChallenge;
    const bySelf = await post(body, signedHeaders(first, leaked));
    expect(bySelf.response.status).toBe(401);
    expect(errorOf(bySelf).code).toBe("WALLET_SIGNATURE_INVALID");
  });

  it("the one verifier takes a delegated key's stamp only within its scope and while ACTIVE", async () => {
    const { key, body } = await walletCard(0);
    const created = await activeKey(body, key);
    const row = (await sandbox.server.data.one(
      q.selectFrom("DelegatedKey").selectAll().where("id", "=", created.id),
    ))!;
    const signing = new SignedRequests(
      { data: sandbox.server.data, clock: systemClock, log: sandbox.server.log },
      loadAuthConfig({}),
    );
    const ctx: RequestContext = {
      platformId: row.platformId,
      tokenId: "test",
      clock: systemClock,
      log: sandbox.server.log,
    };
    const check = (scope: DelegatedScope, privateKey = row.privateKey) => {
      const payload = payloadToSign(row.platformId, scope.activity, { n: 1 }, new Date());
      return signing.verifyDelegated(ctx, serverStamp(payload, privateKey), payload, scope);
    };
    const pay: DelegatedScope = {
      activity: Activity.SIGN_CARD_PAYMENT,
      accountId: row.accountId,
      fundingSourceId: row.fundingSourceId,
    };
    const own: DelegatedScope = {
      activity: Activity.DELETE_DELEGATED_USER,
      accountId: row.accountId,
      delegatedKeyId: row.id,
    };
    await expect(check(pay)).resolves.toBe(row.id);
    await expect(check(own)).resolves.toBe(row.id);
    // Another funding source, another key's revocation, another key.
    const reason = { code: "WALLET_SIGNATURE_INVALID" };
    await expect(check({ ...pay, fundingSourceId: "CardFundingSource:x" })).rejects.toMatchObject(
      reason,
    );
    await expect(check({ ...own, delegatedKeyId: "DelegatedKey:x" })).rejects.toMatchObject(reason);
    await expect(check(pay, generateP256KeyPair().privateKeyHex)).rejects.toMatchObject(reason);
    // A stamp over another payload.
    const payload = payloadToSign(row.platformId, pay.activity, {}, new Date());
    await expect(
      signing.verifyDelegated(ctx, serverStamp(`${payload} `, row.privateKey), payload, pay),
    ).rejects.toMatchObject(reason);

    const revoked = await sandbox.client.DELETE("/auth/delegated-keys/{id}", {
      params: { path: { id: created.id } },
    });
    expect(revoked.response.status).toBe(204);
    await expect(check(pay)).rejects.toMatchObject(reason);
    await expect(check(own)).rejects.toMatchObject(reason);
  });
});
