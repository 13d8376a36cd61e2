import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { encryptOtpCodeToBundle, verifyOtpVerificationToken } from "@turnkey/crypto";
import {
  createStamp,
  generateP256KeyPair,
  parseStamp,
  publicKeysEqual,
  sealOtpBundle,
} from "@payments-sandbox/crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  createWallet,
  enclavePublicKey,
  errorOf,
  otpLogin,
  otpChallenge,
  requestOtp,
  signedHeaders,
  verifyOtp,
  type AuthMethodCreated,
  type AuthSession,
  type InternalAccount,
  type SignedChallenge,
} from "./support/wallet.js";

describe.each(databases)("OTP login on %s", (kind) => {
  let sandbox: TestSandbox;
  const clock = new ManualClock();
  beforeAll(async () => {
    sandbox = await startSandbox(kind, { clock });
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  async function sealedCode(methodId: string, code = "000000") {
    const { targetPublic } = await requestOtp(sandbox, methodId);
    const tek = generateP256KeyPair();
    const bundle = await sealOtpBundle({
      otpCode: code,
      tekPublicKeyHex: tek.publicKeyHex,
      targetPublicKeyHex: targetPublic,
    });
    return { tek, bundle };
  }

  it("publishes the OTP enclave key on GET /sandbox/keys", async () => {
    const config = await sandbox.client.GET("/sandbox/keys");
    expect(config.response.status).toBe(200);
    expect(config.data?.otpEnclavePublicKey).toMatch(/^04[0-9a-f]{128}$/);
    expect(config.data?.webhookPublicKey).toContain("BEGIN PUBLIC KEY");
    // Another platform has its own enclave key.
    const other = await sandbox.otherPlatformClient();
    const theirs = await other.GET("/sandbox/keys");
    expect(theirs.data?.otpEnclavePublicKey).not.toBe(config.data?.otpEnclavePublicKey);
  });

  it("logs in with the sandbox code: 202 with a TEK-bound token, then 200 on the TEK-stamped retry", async () => {
    const wallet = await createWallet(sandbox);
    const { tek, bundle } = await sealedCode(wallet.emailMethodId);

    const first = await verifyOtp(sandbox, wallet.emailMethodId, bundle);
    expect(first.response.status).toBe(202);
    const challenge = first.data as SignedChallenge;
    expect(challenge.type).toBe("EMAIL_OTP");
    expect(challenge.requestId).toMatch(/^Request:[0-9a-f-]{36}$/);
    expect(new Date(challenge.expiresAt).getTime()).toBe(clock.now().getTime() + 5 * 60_000);

    // The payload is canonical JSON binding the TEK and the verification token.
    const payload = JSON.parse(challenge.payloadToSign) as {
      organizationId: string;
      parameters: { publicKey: string; verificationToken: string };
      timestampMs: string;
      type: string;
    };
    expect(Object.keys(payload)).toEqual(["organizationId", "parameters", "timestampMs", "type"]);
    expect(Object.keys(payload.parameters)).toEqual(["publicKey", "verificationToken"]);
    expect(payload.type).toBe("ACTIVITY_TYPE_OTP_LOGIN");
    expect(payload.timestampMs).toBe(String(clock.now().getTime()));
    expect(payload.organizationId).toMatch(/^Platform:/);
    expect(payload.parameters.publicKey).toBe(tek.publicKeyHex);
    expect(challenge.payloadToSign).toBe(JSON.stringify(payload));

    // The reference client library accepts the token with the published key.
    const claims = await verifyOtpVerificationToken(
      payload.parameters.verificationToken,
      await enclavePublicKey(sandbox),
    );
    expect(claims).toMatchObject({
      verification_type: "OTP_TYPE_EMAIL",
      contact: wallet.email,
      organization_id: payload.organizationId,
      public_key: tek.publicKeyHex,
    });

    const retry = await verifyOtp(
      sandbox,
      wallet.emailMethodId,
      bundle,
      signedHeaders(challenge, tek.privateKeyHex),
    );
    expect(retry.response.status).toBe(200);
    const session = retry.data as AuthSession;
    expect(session).toMatchObject({
      accountId: wallet.accountId,
      type: "EMAIL_OTP",
      nickname: wallet.email,
    });
    expect(session.id).toMatch(/^Session:/);
    expect(session.encryptedSessionSigningKey).toBeUndefined();
    expect(new Date(session.expiresAt).getTime()).toBe(clock.now().getTime() + 15 * 60_000);

    // The TEK is now the session key: it can sign a wallet action.
    const patch = await sandbox.client.PATCH("/internal-accounts/{id}", {
      params: { path: { id: wallet.accountId } },
      body: { privateEnabled: true },
    });
    expect(patch.response.status).toBe(202);
    const done = await sandbox.client.PATCH("/internal-accounts/{id}", {
      params: {
        path: { id: wallet.accountId },
        header: signedHeaders(patch.data as SignedChallenge, tek.privateKeyHex),
      },
      body: { privateEnabled: true },
    });
    expect(done.response.status).toBe(200);
    expect((done.data as InternalAccount).privateEnabled).toBe(true);

    // Listed without any key material.
    const list = await sandbox.client.GET("/auth/sessions", {
      params: { query: { accountId: wallet.accountId } },
    });
    expect(list.data?.data.map((s) => s.id)).toEqual([session.id]);
    expect(list.data?.data[0]).not.toHaveProperty("encryptedSessionSigningKey");
  });

  it("works unchanged for a client built on @turnkey/crypto and @turnkey/api-key-stamper", async () => {
    const wallet = await createWallet(sandbox);
    const challengeRes = await sandbox.client.POST("/auth/credentials/{id}/challenge", {
      params: { path: { id: wallet.emailMethodId } },
    });
    const targetBundle = otpChallenge(challengeRes.data).otpEncryptionTargetBundle!;
    const tek = generateP256KeyPair();
    // encryptOtpCodeToBundle checks the bundle signature against the published key.
    const encrypted = await encryptOtpCodeToBundle(
      "000000",
      targetBundle,
      tek.publicKeyHex,
      await enclavePublicKey(sandbox),
    );
    const first = await verifyOtp(sandbox, wallet.emailMethodId, encrypted);
    expect(first.response.status).toBe(202);
    const challenge = first.data as SignedChallenge;

    const stamper = new ApiKeyStamper({
      apiPublicKey: tek.publicKeyHex,
      apiPrivateKey: tek.privateKeyHex,
    });
    const { stampHeaderValue } = await stamper.stamp(challenge.payloadToSign);
    const retry = await verifyOtp(sandbox, wallet.emailMethodId, encrypted, {
      "Service-Wallet-Signature": stampHeaderValue,
      "Request-Id": challenge.requestId,
    });
    expect(retry.response.status).toBe(200);
    expect(retry.data).toMatchObject({ type: "EMAIL_OTP", accountId: wallet.accountId });
  });

  it("accepts a TEK sent uncompressed", async () => {
    const wallet = await createWallet(sandbox);
    const { targetPublic } = await requestOtp(sandbox, wallet.emailMethodId);
    const tek = generateP256KeyPair();
    const bundle = await sealOtpBundle({
      otpCode: "000000",
      tekPublicKeyHex: tek.publicKeyUncompressedHex,
      targetPublicKeyHex: targetPublic,
    });
    const first = await verifyOtp(sandbox, wallet.emailMethodId, bundle);
    expect(first.response.status).toBe(202);
    const retry = await verifyOtp(
      sandbox,
      wallet.emailMethodId,
      bundle,
      signedHeaders(first.data as SignedChallenge, tek.privateKeyHex),
    );
    expect(retry.response.status).toBe(200);
  });

  it("rejects a wrong code with 401 UNAUTHORIZED and reason Invalid OTP code", async () => {
    const wallet = await createWallet(sandbox);
    const { bundle } = await sealedCode(wallet.emailMethodId, "123456");
    const res = await verifyOtp(sandbox, wallet.emailMethodId, bundle);
    expect(res.response.status).toBe(401);
    expect(errorOf(res)).toMatchObject({
      status: 401,
      code: "UNAUTHORIZED",
      reason: "Invalid OTP code",
    });
  });

  it("locks a credential after 5 wrong codes, across server processes sharing the database", async () => {
    const wallet = await createWallet(sandbox);
    const second = await startSandbox(kind, { clock, databaseUrl: sandbox.database.url });
    try {
      const { targetPublic } = await requestOtp(sandbox, wallet.emailMethodId);
      const tek = generateP256KeyPair();
      const seal = (otpCode: string) =>
        sealOtpBundle({
          otpCode,
          tekPublicKeyHex: tek.publicKeyHex,
          targetPublicKeyHex: targetPublic,
        });
      for (const server of [sandbox, sandbox, sandbox, second, second]) {
        const res = await verifyOtp(server, wallet.emailMethodId, await seal("999999"));
        expect(errorOf(res).reason).toBe("Invalid OTP code");
        clock.advance(1000);
      }
      for (const server of [second, sandbox]) {
        const res = await verifyOtp(server, wallet.emailMethodId, await seal("000000"));
        expect(res.response.status).toBe(429);
        expect(errorOf(res).code).toBe("RATE_LIMITED");
        expect(Number(res.response.headers.get("Retry-After"))).toBe(15 * 60 - 5);
      }
      // Once the window has passed (and with a new code: the old one expired), login works.
      clock.advance(15 * 60_000);
      const fresh = await requestOtp(second, wallet.emailMethodId);
      const bundle = await sealOtpBundle({
        otpCode: "000000",
        tekPublicKeyHex: tek.publicKeyHex,
        targetPublicKeyHex: fresh.targetPublic,
      });
      expect((await verifyOtp(second, wallet.emailMethodId, bundle)).response.status).toBe(202);
    } finally {
      await second.stop();
    }
  });

  it("limits codes to 5 a minute: the 6th challenge is 429 and leaves the latest code working", async () => {
    const wallet = await createWallet(sandbox);
    let latest = await requestOtp(sandbox, wallet.emailMethodId);
    for (let i = 1; i < 5; i++) {
      clock.advance(1000);
      latest = await requestOtp(sandbox, wallet.emailMethodId);
    }
    const refused = await sandbox.client.POST("/auth/credentials/{id}/challenge", {
      params: { path: { id: wallet.emailMethodId } },
      body: {},
    });
    expect(refused.response.status).toBe(429);
    expect(errorOf(refused).code).toBe("RATE_LIMITED");
    // The first of the five leaves the window 60 s after it, 4 s from now.
    expect(Number(refused.response.headers.get("Retry-After"))).toBe(56);

    // The refused challenge stored no new target: the fifth code still opens.
    const tek = generateP256KeyPair();
    const bundle = await sealOtpBundle({
      otpCode: "000000",
      tekPublicKeyHex: tek.publicKeyHex,
      targetPublicKeyHex: latest.targetPublic,
    });
    expect((await verifyOtp(sandbox, wallet.emailMethodId, bundle)).response.status).toBe(202);

    clock.advance(56_000);
    await requestOtp(sandbox, wallet.emailMethodId);
  });

  it("accepts only the latest code, once, and not after it expires", async () => {
    const wallet = await createWallet(sandbox);
    const older = await sealedCode(wallet.emailMethodId);
    const latest = await sealedCode(wallet.emailMethodId);

    const stale = await verifyOtp(sandbox, wallet.emailMethodId, older.bundle);
    expect(stale.response.status).toBe(401);
    expect(errorOf(stale).reason).toMatch(/latest OTP target key/);

    expect((await verifyOtp(sandbox, wallet.emailMethodId, latest.bundle)).response.status).toBe(
      202,
    );
    const again = await verifyOtp(sandbox, wallet.emailMethodId, latest.bundle);
    expect(again.response.status).toBe(401);
    expect(errorOf(again).reason).toMatch(/No OTP code is pending/);

    const late = await sealedCode(wallet.emailMethodId);
    clock.advance(5 * 60_000 + 1);
    const expired = await verifyOtp(sandbox, wallet.emailMethodId, late.bundle);
    expect(expired.response.status).toBe(401);
    expect(errorOf(expired).reason).toBe("OTP code has expired");
  });

  it("refuses a retry stamped by any key other than the TEK", async () => {
    const wallet = await createWallet(sandbox);
    const { bundle } = await sealedCode(wallet.emailMethodId);
    const first = await verifyOtp(sandbox, wallet.emailMethodId, bundle);
    const challenge = first.data as SignedChallenge;
    const intruder = generateP256KeyPair();
    const res = await verifyOtp(
      sandbox,
      wallet.emailMethodId,
      bundle,
      signedHeaders(challenge, intruder.privateKeyHex),
    );
    expect(res.response.status).toBe(401);
    expect(errorOf(res).code).toBe("WALLET_SIGNATURE_INVALID");
  });

  it("refuses a retry whose body differs from the first leg", async () => {
    const wallet = await createWallet(sandbox);
    const { tek, bundle } = await sealedCode(wallet.emailMethodId);
    const first = await verifyOtp(sandbox, wallet.emailMethodId, bundle);
    const challenge = first.data as SignedChallenge;
    const other = await sealOtpBundle({
      otpCode: "000000",
      tekPublicKeyHex: tek.publicKeyHex,
      targetPublicKeyHex: generateP256KeyPair().publicKeyUncompressedHex,
    });
    const res = await verifyOtp(
      sandbox,
      wallet.emailMethodId,
      other,
      signedHeaders(challenge, tek.privateKeyHex),
    );
    expect(res.response.status).toBe(401);
    expect(errorOf(res).code).toBe("WALLET_SIGNATURE_BODY_MISMATCH");
  });

  it("refuses the retry once the challenge has expired, and a replayed Request-Id", async () => {
    const wallet = await createWallet(sandbox);
    const { tek, bundle } = await sealedCode(wallet.emailMethodId);
    const first = await verifyOtp(sandbox, wallet.emailMethodId, bundle);
    const challenge = first.data as SignedChallenge;
    clock.advance(5 * 60_000);
    const late = await verifyOtp(
      sandbox,
      wallet.emailMethodId,
      bundle,
      signedHeaders(challenge, tek.privateKeyHex),
    );
    expect(late.response.status).toBe(401);
    expect(errorOf(late)).toMatchObject({ code: "UNAUTHORIZED", reason: "Request-Id has expired" });

    const fresh = await sealedCode(wallet.emailMethodId);
    const leg = (await verifyOtp(sandbox, wallet.emailMethodId, fresh.bundle))
      .data as SignedChallenge;
    const headers = signedHeaders(leg, fresh.tek.privateKeyHex);
    expect(
      (await verifyOtp(sandbox, wallet.emailMethodId, fresh.bundle, headers)).response.status,
    ).toBe(200);
    const replay = await verifyOtp(sandbox, wallet.emailMethodId, fresh.bundle, headers);
    expect(replay.response.status).toBe(401);
    expect(errorOf(replay).reason).toBe("Request-Id already consumed");
  });

  it("refuses a retry with an unknown Request-Id, another credential's, or from another platform", async () => {
    const wallet = await createWallet(sandbox);
    const { tek, bundle } = await sealedCode(wallet.emailMethodId);
    const challenge = (await verifyOtp(sandbox, wallet.emailMethodId, bundle))
      .data as SignedChallenge;
    const headers = signedHeaders(challenge, tek.privateKeyHex);

    const unknown = await verifyOtp(sandbox, wallet.emailMethodId, bundle, {
      ...headers,
      "Request-Id": "Request:00000000-0000-4000-8000-000000000000",
    });
    expect(unknown.response.status).toBe(401);
    expect(errorOf(unknown)).toMatchObject({
      code: "UNAUTHORIZED",
      reason: "Request-Id is unknown",
    });

    // The challenge of this login, presented on another credential's retry.
    const another = await createWallet(sandbox);
    const elsewhere = await verifyOtp(sandbox, another.emailMethodId, bundle, headers);
    expect(elsewhere.response.status).toBe(401);
    expect(errorOf(elsewhere).code).toBe("WALLET_SIGNATURE_BODY_MISMATCH");

    // Another platform sees neither the credential nor the challenge.
    const other = await sandbox.otherPlatformClient();
    const foreign = await other.POST("/auth/credentials/{id}/verify", {
      params: { path: { id: wallet.emailMethodId }, header: headers },
      body: { type: "EMAIL_OTP", encryptedOtpBundle: bundle },
    });
    expect(foreign.response.status).toBe(404);
    // Nor can it name this platform's challenge on a credential of its own.
    const theirs = { ...sandbox, client: other };
    const theirWallet = await createWallet(theirs);
    const { targetPublic } = await requestOtp(theirs, theirWallet.emailMethodId);
    const theirBundle = await sealOtpBundle({
      otpCode: "000000",
      tekPublicKeyHex: tek.publicKeyHex,
      targetPublicKeyHex: targetPublic,
    });
    const borrowed = await verifyOtp(theirs, theirWallet.emailMethodId, theirBundle, headers);
    expect(borrowed.response.status).toBe(401);
    expect(errorOf(borrowed).reason).toBe("Request-Id is unknown");

    // None of these used the challenge up.
    const done = await verifyOtp(sandbox, wallet.emailMethodId, bundle, headers);
    expect(done.response.status).toBe(200);
  });

  it("registers an SMS_OTP credential with a signed retry and logs in with it", async () => {
    const wallet = await createWallet(sandbox);
    const { key } = await otpLogin(sandbox, wallet.emailMethodId);
    // Production's own request: no nickname, the codes go to the customer's phone.
    const body = { type: "SMS_OTP" as const, accountId: wallet.accountId };
    const first = await sandbox.client.POST("/auth/credentials", { body });
    expect(first.response.status).toBe(202);
    const challenge = first.data as SignedChallenge;
    expect(challenge.type).toBe("SMS_OTP");
    expect(JSON.parse(challenge.payloadToSign)).toMatchObject({
      type: "ACTIVITY_TYPE_CREATE_AUTH_CREDENTIAL",
      parameters: body,
    });
    // The stamp's key may arrive in either form: keys are compared as points.
    const stamp = parseStamp(createStamp(challenge.payloadToSign, key.privateKeyHex));
    expect(publicKeysEqual(stamp.publicKey, key.publicKeyUncompressedHex)).toBe(true);

    const created = await sandbox.client.POST("/auth/credentials", {
      params: { header: signedHeaders(challenge, key.privateKeyHex) },
      body,
    });
    expect(created.response.status).toBe(201);
    const sms = created.data as AuthMethodCreated;
    expect(sms).toMatchObject({ type: "SMS_OTP", nickname: wallet.phoneNumber });
    expect(sms.otpEncryptionTargetBundle).toBeDefined();

    const smsLogin = await otpLogin(sandbox, sms.id, "SMS_OTP");
    expect(smsLogin.session).toMatchObject({ type: "SMS_OTP", nickname: wallet.phoneNumber });

    const list = await sandbox.client.GET("/auth/credentials", {
      params: { query: { accountId: wallet.accountId } },
    });
    expect(list.data?.data.map((m) => m.type).sort()).toEqual(["EMAIL_OTP", "SMS_OTP"]);
  });
});
