import type { Schemas } from "@payments-sandbox/client";
import { decryptCredentialBundle } from "@turnkey/crypto";
import {
  generateP256KeyPair,
  openSessionKeyBundle,
  publicKeyFromPrivateKey,
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
  signedHeaders,
  type AuthSession,
  type SignedChallenge,
} from "./support/wallet.js";
import { signedRetrySteps } from "./support/signed-retry.js";

// Wallet sessions and keys behind signed retries: revoking and refreshing a
// session, and exporting the wallet key, each sealed to clientPublicKey.

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

  const { setPrivacy, expect401 } = signedRetrySteps(() => sandbox);

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
    // The file's first test also compiles each operation's checks on first use.
  }, 90_000);

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
});
