import {
  base64urlEncode,
  createStamp,
  generateP256KeyPair,
  sealOtpBundle,
} from "@payments-sandbox/crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  createWallet,
  errorOf,
  otpLogin,
  requestOtp,
  signedHeaders,
  verifyOtp,
  type AuthSession,
  type SignedChallenge,
} from "./support/wallet.js";
import { signedRetrySteps } from "./support/signed-retry.js";

// Signed retries of embedded-wallet actions: the stamp, its headers and its
// Request-Id. Sessions and keys are in auth-session-keys.test.ts, credentials
// in auth-credentials.test.ts.

describe.each(databases)("signed retries on %s", (kind) => {
  let sandbox: TestSandbox;
  const clock = new ManualClock();
  beforeAll(async () => {
    sandbox = await startSandbox(kind, { clock });
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const { setPrivacy, pendingPrivacy, expect401 } = signedRetrySteps(() => sandbox);

  it("performs the action on a retry stamped by an active session of the wallet", async () => {
    const { wallet, key, challenge } = await pendingPrivacy();
    expect(challenge).not.toHaveProperty("type");
    expect(JSON.parse(challenge.payloadToSign)).toEqual({
      organizationId: expect.stringMatching(/^Platform:/),
      parameters: { accountId: wallet.accountId, privateEnabled: true },
      timestampMs: String(clock.now().getTime()),
      type: "ACTIVITY_TYPE_UPDATE_WALLET_PRIVACY",
    });
    const done = await setPrivacy(wallet, true, signedHeaders(challenge, key.privateKeyHex));
    expect(done.response.status).toBe(200);
    expect(done.data).toMatchObject({ id: wallet.accountId, privateEnabled: true });
    const read = await sandbox.client.GET("/customers/internal-accounts", {
      params: { query: { customerId: wallet.customerId, type: "EMBEDDED_WALLET" } },
    });
    expect(read.data?.data[0]).toMatchObject({ id: wallet.accountId, privateEnabled: true });
  });

  it("names each header problem with its own code", async () => {
    const { wallet, key, challenge } = await pendingPrivacy();
    const stamp = createStamp(challenge.payloadToSign, key.privateKeyHex);
    await expect401(
      setPrivacy(wallet, true, { "Request-Id": challenge.requestId }),
      "WALLET_SIGNATURE_MISSING",
    );
    await expect401(
      setPrivacy(wallet, true, { "Service-Wallet-Signature": stamp }),
      "REQUEST_ID_MISSING",
    );
    const malformed = [
      "not base64url!",
      base64urlEncode("not json"),
      base64urlEncode(
        JSON.stringify({ publicKey: key.publicKeyHex, scheme: "X", signature: "30" }),
      ),
      base64urlEncode(
        JSON.stringify({
          publicKey: `04${"11".repeat(64)}`,
          scheme: "SIGNATURE_SCHEME_TK_API_P256",
          signature: "3006020101020101",
        }),
      ),
    ];
    for (const value of malformed) {
      await expect401(
        setPrivacy(wallet, true, {
          "Service-Wallet-Signature": value,
          "Request-Id": challenge.requestId,
        }),
        "WALLET_SIGNATURE_MALFORMED",
      );
    }
    // Same stamp, but the body is not the one the payload was issued for.
    await expect401(
      setPrivacy(wallet, false, signedHeaders(challenge, key.privateKeyHex)),
      "WALLET_SIGNATURE_BODY_MISMATCH",
    );
    // A real stamp over something else.
    await expect401(
      setPrivacy(wallet, true, {
        "Service-Wallet-Signature": createStamp(`${challenge.payloadToSign} `, key.privateKeyHex),
        "Request-Id": challenge.requestId,
      }),
      "WALLET_SIGNATURE_INVALID",
      "Signature does not verify over payloadToSign",
    );
    // A valid stamp by a key that is no session of this wallet.
    await expect401(
      setPrivacy(wallet, true, signedHeaders(challenge, generateP256KeyPair().privateKeyHex)),
      "WALLET_SIGNATURE_INVALID",
      "Signer is not an active session key of this wallet",
    );
    // None of the failures used the challenge up.
    const ok = await setPrivacy(wallet, true, {
      "Service-Wallet-Signature": stamp,
      "Request-Id": challenge.requestId,
    });
    expect(ok.response.status).toBe(200);
  });

  it("takes the stamp under production's header name, Grid-Wallet-Signature, too", async () => {
    const { wallet, key, challenge } = await pendingPrivacy();
    const stamp = createStamp(challenge.payloadToSign, key.privateKeyHex);
    const other = createStamp(challenge.payloadToSign, generateP256KeyPair().privateKeyHex);
    // Two different stamps: which one was meant cannot be told.
    const both = await setPrivacy(wallet, true, {
      "Service-Wallet-Signature": stamp,
      "Grid-Wallet-Signature": other,
      "Request-Id": challenge.requestId,
    });
    expect(both.response.status).toBe(401);
    expect(errorOf(both)).toMatchObject({ code: "WALLET_SIGNATURE_MALFORMED" });
    expect(errorOf(both).reason).toMatch(/Grid-Wallet-Signature.*differ|different/);
    // The same stamp under both names is one stamp.
    const same = await pendingPrivacy();
    const sameStamp = createStamp(same.challenge.payloadToSign, same.key.privateKeyHex);
    const twice = await setPrivacy(same.wallet, true, {
      "Service-Wallet-Signature": sameStamp,
      "Grid-Wallet-Signature": sameStamp,
      "Request-Id": same.challenge.requestId,
    });
    expect(twice.response.status).toBe(200);
    // Production's name alone, on a wallet action and on an OTP login's retry.
    const done = await setPrivacy(wallet, true, {
      "Grid-Wallet-Signature": stamp,
      "Request-Id": challenge.requestId,
    });
    expect(done.response.status).toBe(200);
    expect(done.data).toMatchObject({ id: wallet.accountId, privateEnabled: true });
    const { targetPublic } = await requestOtp(sandbox, wallet.emailMethodId);
    const tek = generateP256KeyPair();
    const encrypted = await sealOtpBundle({
      otpCode: "000000",
      tekPublicKeyHex: tek.publicKeyHex,
      targetPublicKeyHex: targetPublic,
    });
    const first = await verifyOtp(sandbox, wallet.emailMethodId, encrypted);
    const login = first.data as SignedChallenge;
    const retry = await verifyOtp(sandbox, wallet.emailMethodId, encrypted, {
      "Grid-Wallet-Signature": createStamp(login.payloadToSign, tek.privateKeyHex),
      "Request-Id": login.requestId,
    });
    expect(retry.response.status).toBe(200);
    expect((retry.data as AuthSession).accountId).toBe(wallet.accountId);
  });

  it("refuses unknown, expired, replayed and foreign Request-Ids", async () => {
    const { wallet, key, challenge } = await pendingPrivacy();
    await expect401(
      setPrivacy(wallet, true, {
        ...signedHeaders(challenge, key.privateKeyHex),
        "Request-Id": "Request:00000000-0000-4000-8000-000000000000",
      }),
      "UNAUTHORIZED",
      "Request-Id is unknown",
    );
    const headers = signedHeaders(challenge, key.privateKeyHex);
    expect((await setPrivacy(wallet, true, headers)).response.status).toBe(200);
    await expect401(
      setPrivacy(wallet, true, headers),
      "UNAUTHORIZED",
      "Request-Id already consumed",
    );

    const next = (await setPrivacy(wallet, false)).data as SignedChallenge;
    clock.advance(5 * 60_000);
    await expect401(
      setPrivacy(wallet, false, signedHeaders(next, key.privateKeyHex)),
      "UNAUTHORIZED",
      "Request-Id has expired",
    );

    // Another platform cannot see, let alone answer, this platform's challenge.
    const fresh = await pendingPrivacy();
    const other = await sandbox.otherPlatformClient();
    const foreign = await other.PATCH("/internal-accounts/{id}", {
      params: {
        path: { id: fresh.wallet.accountId },
        header: signedHeaders(fresh.challenge, fresh.key.privateKeyHex),
      },
      body: { privateEnabled: true },
    });
    expect(foreign.response.status).toBe(404);
  });

  it("lets only one of two concurrent retries with the same Request-Id through", async () => {
    const { wallet, key, challenge } = await pendingPrivacy();
    const headers = signedHeaders(challenge, key.privateKeyHex);
    const results = await Promise.all([
      setPrivacy(wallet, true, headers),
      setPrivacy(wallet, true, headers),
    ]);
    expect(results.map((r) => r.response.status).sort()).toEqual([200, 401]);
  });

  it("refuses a Request-Id issued for another action", async () => {
    const { wallet, key } = await pendingPrivacy();
    const clientKey = generateP256KeyPair();
    const exportChallenge = await sandbox.client.POST("/internal-accounts/{id}/export", {
      params: { path: { id: wallet.accountId } },
      body: { clientPublicKey: clientKey.publicKeyUncompressedHex },
    });
    expect(exportChallenge.response.status).toBe(202);
    await expect401(
      setPrivacy(
        wallet,
        true,
        signedHeaders(exportChallenge.data as SignedChallenge, key.privateKeyHex),
      ),
      "WALLET_SIGNATURE_BODY_MISMATCH",
    );
  });

  it("lets no session of another wallet sign", async () => {
    const { wallet, challenge } = await pendingPrivacy();
    const stranger = await createWallet(sandbox);
    const { key: strangerKey } = await otpLogin(sandbox, stranger.emailMethodId);
    await expect401(
      setPrivacy(wallet, true, signedHeaders(challenge, strangerKey.privateKeyHex)),
      "WALLET_SIGNATURE_INVALID",
      "Signer is not an active session key of this wallet",
    );
  });

  it("lets no expired session sign", async () => {
    const wallet = await createWallet(sandbox);
    const { key } = await otpLogin(sandbox, wallet.emailMethodId);
    clock.advance(15 * 60_000);
    const challenge = (await setPrivacy(wallet, true)).data as SignedChallenge;
    await expect401(
      setPrivacy(wallet, true, signedHeaders(challenge, key.privateKeyHex)),
      "WALLET_SIGNATURE_INVALID",
    );
    const list = await sandbox.client.GET("/auth/sessions", {
      params: { query: { accountId: wallet.accountId } },
    });
    expect(list.data?.data).toEqual([]);
  });

  it("accepts the legacy signature value sandbox-valid-signature", async () => {
    const { wallet, challenge } = await pendingPrivacy();
    // It still needs the pending Request-Id and the same body.
    await expect401(
      setPrivacy(wallet, false, {
        "Service-Wallet-Signature": "sandbox-valid-signature",
        "Request-Id": challenge.requestId,
      }),
      "WALLET_SIGNATURE_BODY_MISMATCH",
    );
    const res = await setPrivacy(wallet, true, {
      "Service-Wallet-Signature": "sandbox-valid-signature",
      "Request-Id": challenge.requestId,
    });
    expect(res.response.status).toBe(200);
  });
});

describe.each(databases)("signed retries with legacy shortcuts off on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind, { env: { SANDBOX_LEGACY_SHORTCUTS: "false" } });
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("treats sandbox-valid-signature as a malformed stamp", async () => {
    const wallet = await createWallet(sandbox);
    await otpLogin(sandbox, wallet.emailMethodId);
    const first = await sandbox.client.PATCH("/internal-accounts/{id}", {
      params: { path: { id: wallet.accountId } },
      body: { privateEnabled: true },
    });
    const res = await sandbox.client.PATCH("/internal-accounts/{id}", {
      params: {
        path: { id: wallet.accountId },
        header: {
          "Service-Wallet-Signature": "sandbox-valid-signature",
          "Request-Id": (first.data as SignedChallenge).requestId,
        },
      },
      body: { privateEnabled: true },
    });
    expect(res.response.status).toBe(401);
    expect(errorOf(res).code).toBe("WALLET_SIGNATURE_MALFORMED");
  });
});
