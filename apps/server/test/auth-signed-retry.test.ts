import type { Schemas } from "@payments-sandbox/client";
import { decryptCredentialBundle } from "@turnkey/crypto";
import {
  base64urlEncode,
  createStamp,
  generateP256KeyPair,
  openSessionKeyBundle,
  publicKeyFromPrivateKey,
  sealOtpBundle,
} from "@payments-sandbox/crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { createAccount } from "./money-helpers.js";
import {
  createWallet,
  errorOf,
  openSessionKey,
  otpLogin,
  requestOtp,
  signedHeaders,
  verifyOtp,
  type AuthMethodCreated,
  type AuthSession,
  type SignedChallenge,
  type Wallet,
} from "./support/wallet.js";

type WalletExport = Schemas["InternalAccountExportResponse"];

describe.each(databases)("signed retries on %s", (kind) => {
  let sandbox: TestSandbox;
  const clock = new ManualClock();
  beforeAll(async () => {
    sandbox = await startSandbox(kind, { clock });
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  type Headers = {
    "Service-Wallet-Signature"?: string;
    "Grid-Wallet-Signature"?: string;
    "Request-Id"?: string;
  };

  function setPrivacy(wallet: Wallet, privateEnabled: boolean, header: Headers = {}) {
    return sandbox.client.PATCH("/internal-accounts/{id}", {
      params: { path: { id: wallet.accountId }, header },
      body: { privateEnabled },
    });
  }

  /** A wallet with a logged-in session, and a pending privacy challenge. */
  async function pendingPrivacy() {
    const wallet = await createWallet(sandbox);
    const { session, key } = await otpLogin(sandbox, wallet.emailMethodId);
    const first = await setPrivacy(wallet, true);
    expect(first.response.status).toBe(202);
    return { wallet, session, key, challenge: first.data as SignedChallenge };
  }

  async function expect401(
    result: Promise<{ response: Response; error?: unknown }>,
    code: string,
    reason?: string,
  ) {
    const res = await result;
    expect(res.response.status).toBe(401);
    expect(errorOf(res).code).toBe(code);
    if (reason !== undefined) expect(errorOf(res).reason).toBe(reason);
  }

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

  it("revokes a session (202 → 204, then 404) and its key stops signing", async () => {
    const wallet = await createWallet(sandbox);
    const { session, key } = await otpLogin(sandbox, wallet.emailMethodId);
    const path = { id: session.id };
    const first = await sandbox.client.DELETE("/auth/sessions/{id}", { params: { path } });
    expect(first.response.status).toBe(202);
    const challenge = first.data as SignedChallenge;
    expect(challenge.type).toBe("EMAIL_OTP");
    expect(JSON.parse(challenge.payloadToSign).parameters).toEqual({ sessionId: session.id });
    const done = await sandbox.client.DELETE("/auth/sessions/{id}", {
      params: { path, header: signedHeaders(challenge, key.privateKeyHex) },
    });
    expect(done.response.status).toBe(204);

    const gone = await sandbox.client.DELETE("/auth/sessions/{id}", { params: { path } });
    expect(gone.response.status).toBe(404);
    expect(errorOf(gone).code).toBe("REFERENCE_NOT_FOUND");

    const privacy = (await setPrivacy(wallet, true)).data as SignedChallenge;
    await expect401(
      setPrivacy(wallet, true, signedHeaders(privacy, key.privateKeyHex)),
      "WALLET_SIGNATURE_INVALID",
    );
  });

  it("refreshes a session: 202 → 201 with a new key sealed to clientPublicKey", async () => {
    const wallet = await createWallet(sandbox);
    const { session, key } = await otpLogin(sandbox, wallet.emailMethodId);
    const client = generateP256KeyPair();
    const body = { clientPublicKey: client.publicKeyUncompressedHex };
    const path = { id: session.id };
    const first = await sandbox.client.POST("/auth/sessions/{id}/refresh", {
      params: { path },
      body,
    });
    expect(first.response.status).toBe(202);
    const challenge = first.data as SignedChallenge;
    expect(challenge).not.toHaveProperty("type");
    clock.advance(60_000);
    const done = await sandbox.client.POST("/auth/sessions/{id}/refresh", {
      params: { path, header: signedHeaders(challenge, key.privateKeyHex) },
      body,
    });
    expect(done.response.status).toBe(201);
    const refreshed = done.data as AuthSession;
    expect(refreshed.id).toBe(session.id);
    expect(new Date(refreshed.expiresAt).getTime()).toBe(clock.now().getTime() + 15 * 60_000);
    const newKey = await openSessionKey(
      refreshed.encryptedSessionSigningKey!,
      client.privateKeyHex,
    );
    // The reference client library opens the same bundle.
    expect(
      decryptCredentialBundle(refreshed.encryptedSessionSigningKey!, client.privateKeyHex),
    ).toBe(newKey.privateKeyHex);

    // The new key signs; the TEK it replaced no longer does.
    const old = (await setPrivacy(wallet, true)).data as SignedChallenge;
    await expect401(
      setPrivacy(wallet, true, signedHeaders(old, key.privateKeyHex)),
      "WALLET_SIGNATURE_INVALID",
    );
    const ok = await setPrivacy(wallet, true, signedHeaders(old, newKey.privateKeyHex));
    expect(ok.response.status).toBe(200);
  });

  it("refreshes with a compressed clientPublicKey: that key is the session key, none returned", async () => {
    const wallet = await createWallet(sandbox);
    const { session, key } = await otpLogin(sandbox, wallet.emailMethodId);
    const client = generateP256KeyPair();
    const body = { clientPublicKey: client.publicKeyHex };
    expect(body.clientPublicKey).toMatch(/^0[23][0-9a-f]{64}$/);
    const path = { id: session.id };
    const first = await sandbox.client.POST("/auth/sessions/{id}/refresh", {
      params: { path },
      body,
    });
    expect(first.response.status).toBe(202);
    const challenge = first.data as SignedChallenge;
    expect(JSON.parse(challenge.payloadToSign)).toMatchObject({
      parameters: { clientPublicKey: client.publicKeyHex, sessionId: session.id },
      type: "ACTIVITY_TYPE_REFRESH_SESSION",
    });

    // The retry is stamped by the session's current key, not the new one.
    await expect401(
      sandbox.client.POST("/auth/sessions/{id}/refresh", {
        params: { path, header: signedHeaders(challenge, client.privateKeyHex) },
        body,
      }),
      "WALLET_SIGNATURE_INVALID",
    );
    const again = (
      await sandbox.client.POST("/auth/sessions/{id}/refresh", { params: { path }, body })
    ).data as SignedChallenge;
    clock.advance(60_000);
    const done = await sandbox.client.POST("/auth/sessions/{id}/refresh", {
      params: { path, header: signedHeaders(again, key.privateKeyHex) },
      body,
    });
    expect(done.response.status).toBe(201);
    const refreshed = done.data as AuthSession;
    expect(refreshed).toMatchObject({ id: session.id, accountId: wallet.accountId });
    expect(refreshed).not.toHaveProperty("encryptedSessionSigningKey");
    expect(new Date(refreshed.expiresAt).getTime()).toBe(clock.now().getTime() + 15 * 60_000);

    // The client's own key signs; the TEK it replaced no longer does.
    const action = (await setPrivacy(wallet, true)).data as SignedChallenge;
    await expect401(
      setPrivacy(wallet, true, signedHeaders(action, key.privateKeyHex)),
      "WALLET_SIGNATURE_INVALID",
    );
    const ok = await setPrivacy(wallet, true, signedHeaders(action, client.privateKeyHex));
    expect(ok.response.status).toBe(200);
    expect(ok.data).toMatchObject({ id: wallet.accountId, privateEnabled: true });

    // The refreshed key can refresh again, the legacy way this time.
    const legacy = generateP256KeyPair();
    const legacyBody = { clientPublicKey: legacy.publicKeyUncompressedHex };
    const next = (
      await sandbox.client.POST("/auth/sessions/{id}/refresh", {
        params: { path },
        body: legacyBody,
      })
    ).data as SignedChallenge;
    const sealed = await sandbox.client.POST("/auth/sessions/{id}/refresh", {
      params: { path, header: signedHeaders(next, client.privateKeyHex) },
      body: legacyBody,
    });
    expect(sealed.response.status).toBe(201);
    const opened = await openSessionKey(
      (sealed.data as AuthSession).encryptedSessionSigningKey!,
      legacy.privateKeyHex,
    );
    const last = (await setPrivacy(wallet, false)).data as SignedChallenge;
    await expect401(
      setPrivacy(wallet, false, signedHeaders(last, client.privateKeyHex)),
      "WALLET_SIGNATURE_INVALID",
    );
    expect(
      (await setPrivacy(wallet, false, signedHeaders(last, opened.privateKeyHex))).response.status,
    ).toBe(200);
  });

  it("refuses a refresh key that is not a P-256 point, in either form, and writes nothing", async () => {
    const wallet = await createWallet(sandbox);
    const { session } = await otpLogin(sandbox, wallet.emailMethodId);
    // No point of P-256 has x = 1.
    const offCurve = [`02${"00".repeat(31)}01`, `04${"11".repeat(64)}`];
    for (const clientPublicKey of offCurve) {
      const bad = await sandbox.client.POST("/auth/sessions/{id}/refresh", {
        params: { path: { id: session.id } },
        body: { clientPublicKey },
      });
      expect(bad.response.status).toBe(400);
      expect(errorOf(bad)).toMatchObject({ code: "INVALID_INPUT" });
    }
    const listed = await sandbox.client.GET("/auth/sessions", {
      params: { query: { accountId: wallet.accountId } },
    });
    expect(listed.data?.data).toEqual([
      expect.objectContaining({ id: session.id, expiresAt: session.expiresAt }),
    ]);
  });

  it("exports the wallet key sealed to clientPublicKey, the same key every time", async () => {
    const wallet = await createWallet(sandbox);
    const { key } = await otpLogin(sandbox, wallet.emailMethodId);
    const exportOnce = async () => {
      const client = generateP256KeyPair();
      const body = { clientPublicKey: client.publicKeyUncompressedHex };
      const path = { id: wallet.accountId };
      const first = await sandbox.client.POST("/internal-accounts/{id}/export", {
        params: { path },
        body,
      });
      expect(first.response.status).toBe(202);
      const done = await sandbox.client.POST("/internal-accounts/{id}/export", {
        params: { path, header: signedHeaders(first.data as SignedChallenge, key.privateKeyHex) },
        body,
      });
      expect(done.response.status).toBe(200);
      const exported = done.data as WalletExport;
      expect(exported.id).toBe(wallet.accountId);
      const sealed = exported.encryptedWalletCredentials;
      const opened = await openSessionKeyBundle(sealed, client.privateKeyHex);
      expect(decryptCredentialBundle(sealed, client.privateKeyHex)).toBe(opened);
      return opened;
    };
    const a = await exportOnce();
    const b = await exportOnce();
    expect(a).toBe(b);
    expect(publicKeyFromPrivateKey(a)).not.toBe(key.publicKeyHex);
  });

  it("refuses an off-curve clientPublicKey and wallet actions on a standard account", async () => {
    const wallet = await createWallet(sandbox);
    const offCurve = `04${"11".repeat(64)}`;
    const bad = await sandbox.client.POST("/internal-accounts/{id}/export", {
      params: { path: { id: wallet.accountId } },
      body: { clientPublicKey: offCurve },
    });
    expect(bad.response.status).toBe(400);
    expect(errorOf(bad).code).toBe("INVALID_INPUT");

    const standard = await createAccount(sandbox.client, wallet.customerId, "USD");
    expect(standard.type).toBe("INTERNAL_FIAT");
    const res = await sandbox.client.PATCH("/internal-accounts/{id}", {
      params: { path: { id: standard.id } },
      body: { privateEnabled: true },
    });
    expect(res.response.status).toBe(400);
    const cred = await sandbox.client.POST("/auth/credentials", {
      body: { type: "SMS_OTP", accountId: standard.id },
    });
    expect(cred.response.status).toBe(400);
  });

  it("opens a wallet with an EMAIL_OTP credential on its customer's email, which logs in at once", async () => {
    const wallet = await createWallet(sandbox);
    const listed = await sandbox.client.GET("/auth/credentials", {
      params: { query: { accountId: wallet.accountId } },
    });
    expect(listed.data?.data).toEqual([
      expect.objectContaining({
        id: wallet.emailMethodId,
        type: "EMAIL_OTP",
        nickname: wallet.email,
        accountId: wallet.accountId,
      }),
    ]);
    const { session } = await otpLogin(sandbox, wallet.emailMethodId);
    expect(session).toMatchObject({ type: "EMAIL_OTP", nickname: wallet.email });
  });

  it("takes an OTP credential without a nickname: its codes go to the customer's email or phone", async () => {
    const bare = await sandbox.client.POST("/customers", {
      body: { customerType: "INDIVIDUAL", fullName: "No Contact", currencies: ["USDB"] },
    });
    const customerId = bare.data!.id!;
    const accountId = (
      await sandbox.client.GET("/customers/internal-accounts", {
        params: { query: { customerId, type: "EMBEDDED_WALLET" } },
      })
    ).data!.data[0]!.id;
    // No email, no first credential.
    const none = await sandbox.client.GET("/auth/credentials", {
      params: { query: { accountId } },
    });
    expect(none.data?.data).toEqual([]);
    // Nowhere to send codes: the error names what to set.
    for (const type of ["EMAIL_OTP", "SMS_OTP"] as const) {
      const refused = await sandbox.client.POST("/auth/credentials", {
        body: { type, accountId },
      });
      expect(refused.response.status, type).toBe(400);
      expect(errorOf(refused).code).toBe("INVALID_INPUT");
      expect(errorOf(refused).message).toContain(type === "EMAIL_OTP" ? "email" : "phoneNumber");
    }
    // A nickname is no field of an OTP credential.
    const named = await sandbox.client.POST("/auth/credentials", {
      body: { type: "EMAIL_OTP", accountId, nickname: "x@example.com" } as never,
    });
    expect(named.response.status).toBe(400);
  });

  it("deletes a credential (202 → 204), revoking its sessions, but never the last one", async () => {
    const wallet = await createWallet(sandbox);
    const { key } = await otpLogin(sandbox, wallet.emailMethodId);
    const body = { type: "SMS_OTP" as const, accountId: wallet.accountId };
    const pending = (await sandbox.client.POST("/auth/credentials", { body }))
      .data as SignedChallenge;
    const created = await sandbox.client.POST("/auth/credentials", {
      params: { header: signedHeaders(pending, key.privateKeyHex) },
      body,
    });
    expect(created.response.status).toBe(201);
    const sms = created.data as AuthMethodCreated;
    const smsLogin = await otpLogin(sandbox, sms.id, "SMS_OTP");

    // The SMS session deletes the EMAIL_OTP credential; the email session goes with it.
    const path = { id: wallet.emailMethodId };
    const first = await sandbox.client.DELETE("/auth/credentials/{id}", { params: { path } });
    expect(first.response.status).toBe(202);
    const challenge = first.data as SignedChallenge;
    expect(challenge.type).toBe("EMAIL_OTP");
    const done = await sandbox.client.DELETE("/auth/credentials/{id}", {
      params: { path, header: signedHeaders(challenge, smsLogin.key.privateKeyHex) },
    });
    expect(done.response.status).toBe(204);
    const again = await sandbox.client.DELETE("/auth/credentials/{id}", { params: { path } });
    expect(again.response.status).toBe(404);
    expect(errorOf(again).code).toBe("REFERENCE_NOT_FOUND");
    const sessions = await sandbox.client.GET("/auth/sessions", {
      params: { query: { accountId: wallet.accountId } },
    });
    expect(sessions.data?.data.map((s) => s.type)).toEqual(["SMS_OTP"]);

    const last = await sandbox.client.DELETE("/auth/credentials/{id}", {
      params: { path: { id: sms.id } },
    });
    expect(last.response.status).toBe(400);
    expect(errorOf(last).code).toBe("INVALID_INPUT");
  });

  it("refuses a second EMAIL_OTP or SMS_OTP credential with its own code", async () => {
    const wallet = await createWallet(sandbox);
    const { key } = await otpLogin(sandbox, wallet.emailMethodId);
    const email = await sandbox.client.POST("/auth/credentials", {
      body: { type: "EMAIL_OTP", accountId: wallet.accountId },
    });
    expect(email.response.status).toBe(400);
    expect(errorOf(email).code).toBe("EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS");

    const body = { type: "SMS_OTP" as const, accountId: wallet.accountId };
    const pending = (await sandbox.client.POST("/auth/credentials", { body }))
      .data as SignedChallenge;
    const created = await sandbox.client.POST("/auth/credentials", {
      params: { header: signedHeaders(pending, key.privateKeyHex) },
      body,
    });
    expect(created.response.status).toBe(201);
    const second = await sandbox.client.POST("/auth/credentials", {
      body,
    });
    expect(second.response.status).toBe(400);
    expect(errorOf(second).code).toBe("SMS_OTP_CREDENTIAL_ALREADY_EXISTS");
  });

  it("registers the first credential of a wallet opened without one, without a signature", async () => {
    // A customer without an email: its wallet opens with no credential.
    const customer = await sandbox.client.POST("/customers", {
      body: {
        customerType: "INDIVIDUAL",
        fullName: "Phone Only",
        phoneNumber: "+14155550177",
        currencies: ["USDB"],
      },
    });
    const accountId = (
      await sandbox.client.GET("/customers/internal-accounts", {
        params: { query: { customerId: customer.data!.id!, type: "EMBEDDED_WALLET" } },
      })
    ).data!.data[0]!.id;
    const res = await sandbox.client.POST("/auth/credentials", {
      body: { type: "SMS_OTP", accountId },
    });
    expect(res.response.status).toBe(201);
    expect(res.data).toMatchObject({ type: "SMS_OTP", nickname: "+14155550177", accountId });
    expect((res.data as AuthMethodCreated).otpEncryptionTargetBundle).toBeDefined();
    // Every later one is signed.
    const email = await sandbox.client.PATCH("/customers/{customerId}", {
      params: { path: { customerId: customer.data!.id! } },
      body: { customerType: "INDIVIDUAL", email: "phone.only@example.com" },
    });
    expect(email.response.status).toBe(200);
    const later = await sandbox.client.POST("/auth/credentials", {
      body: { type: "EMAIL_OTP", accountId },
    });
    expect(later.response.status).toBe(202);
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

  it("answers 404 for another platform's wallet, credential and session, and lists none of them", async () => {
    const wallet = await createWallet(sandbox);
    const { session } = await otpLogin(sandbox, wallet.emailMethodId);
    const other = await sandbox.otherPlatformClient();
    // The lists answer as for an unknown wallet: 200 with nothing in them.
    const query = { params: { query: { accountId: wallet.accountId } } };
    const [credentials, sessions] = await Promise.all([
      other.GET("/auth/credentials", query),
      other.GET("/auth/sessions", query),
    ]);
    expect(credentials.data).toEqual({ data: [] });
    expect(sessions.data).toEqual({ data: [] });
    const own = await sandbox.client.GET("/auth/sessions", query);
    expect(own.data?.data.map((s) => s.id)).toContain(session.id);
    const results = await Promise.all([
      other.POST("/auth/credentials", {
        body: { type: "SMS_OTP", accountId: wallet.accountId },
      }),
      other.POST("/auth/credentials/{id}/challenge", {
        params: { path: { id: wallet.emailMethodId } },
      }),
      other.POST("/auth/credentials/{id}/verify", {
        params: { path: { id: wallet.emailMethodId } },
        body: {
          type: "EMAIL_OTP",
          encryptedOtpBundle: '{"encappedPublic":"04","ciphertext":"00"}',
        },
      }),
      other.DELETE("/auth/credentials/{id}", { params: { path: { id: wallet.emailMethodId } } }),
      other.DELETE("/auth/sessions/{id}", { params: { path: { id: session.id } } }),
      other.POST("/auth/sessions/{id}/refresh", {
        params: { path: { id: session.id } },
        body: { clientPublicKey: generateP256KeyPair().publicKeyUncompressedHex },
      }),
      other.POST("/internal-accounts/{id}/export", {
        params: { path: { id: wallet.accountId } },
        body: { clientPublicKey: generateP256KeyPair().publicKeyUncompressedHex },
      }),
    ]);
    expect(results.map((r) => r.response.status)).toEqual(Array(results.length).fill(404));
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
