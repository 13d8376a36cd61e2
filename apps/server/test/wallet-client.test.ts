import {
  SandboxApiError,
  WalletFlowError,
  completeOtpLogin,
  executeWalletQuote,
  generateP256KeyPair,
  otpLogin,
  passkeyCreationOptions,
  passkeyLogin,
  payFromWallet,
  refreshSession,
  registerPasskey,
  signed,
  startOtpLogin,
  walletPayloadToSign,
  type PasskeyRequestOptions,
  type QuoteRequest,
  type Signer,
} from "@payments-sandbox/client";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { balanceOf, createAccount, createBankAccount, fund } from "./money-helpers.js";
import { SoftwareAuthenticator } from "./support/authenticator.js";
import { createWallet, type Wallet } from "./support/wallet.js";

// The client's wallet flows where the guides do not go: a passkey registered
// and used from Node (the credentials in their JSON form, as a server relays
// them), the OTP login in two steps, paying from the wallet, both ways of
// refreshing a session's key, and the typed errors of each flow.

const APP_ORIGIN = "http://localhost:3000";

describe.each(databases)("the client's wallet flows on %s", (kind) => {
  let sandbox: TestSandbox;
  let wallet: Wallet;

  beforeAll(async () => {
    // The software authenticator signs for an app page at APP_ORIGIN.
    sandbox = await startSandbox(kind, { env: { PASSKEY_ORIGIN: APP_ORIGIN } });
    wallet = await createWallet(sandbox);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("logs in by OTP in two steps, the code asked for between them", async () => {
    const challenge = await startOtpLogin(sandbox.client, wallet.emailMethodId);
    expect(challenge).toMatchObject({ credentialId: wallet.emailMethodId, type: "EMAIL_OTP" });
    expect(challenge.targetPublic).toMatch(/^04[0-9a-f]{128}$/);
    const session = await completeOtpLogin(sandbox.client, challenge, "000000");
    expect(session.session).toMatchObject({ accountId: wallet.accountId, type: "EMAIL_OTP" });
    // For OTP, the TEK is the session key: the API returns none.
    expect(session.session.encryptedSessionSigningKey).toBeUndefined();
  });

  it("registers a passkey and logs in with it from relayed JSON credentials", async () => {
    const emailSession = await otpLogin(sandbox.client, wallet.emailMethodId, {
      code: async () => "000000",
    });
    const authenticator = new SoftwareAuthenticator();
    const { challenge, publicKey } = passkeyCreationOptions({ userName: wallet.email });
    expect(publicKey.pubKeyCredParams).toEqual([{ type: "public-key", alg: -7 }]);
    const made = authenticator.create(challenge);
    const method = await registerPasskey(sandbox.client, {
      accountId: wallet.accountId,
      nickname: "Relay",
      challenge,
      credential: {
        id: made.credentialId,
        response: {
          clientDataJSON: made.clientDataJson,
          attestationObject: made.attestationObject,
          transports: made.transports,
        },
      },
      signer: emailSession,
    });
    expect(method).toMatchObject({ type: "PASSKEY", credentialId: made.credentialId });

    let asked: PasskeyRequestOptions | undefined;
    const byPasskey = await passkeyLogin(sandbox.client, method.id, (options) => {
      asked = options;
      // The browser is handed the UTF-8 bytes of the hex challenge.
      const assertion = authenticator.get(new TextDecoder().decode(options.challenge));
      return {
        id: assertion.credentialId,
        response: {
          clientDataJSON: assertion.clientDataJson,
          authenticatorData: assertion.authenticatorData,
          signature: assertion.signature,
          userHandle: null,
        },
      };
    });
    expect(Buffer.from(asked!.allowCredentials[0]!.id).toString("base64url")).toBe(
      made.credentialId,
    );
    expect(byPasskey.session).toMatchObject({ type: "PASSKEY", credentialId: made.credentialId });

    // The opened session key signs a wallet action.
    const account = await signed(
      (header) =>
        sandbox.client.PATCH("/internal-accounts/{id}", {
          params: { path: { id: wallet.accountId }, header },
          body: { privateEnabled: true },
        }),
      byPasskey,
    );
    expect(account.privateEnabled).toBe(true);
  });

  it("pays from the wallet in one call: the quote made, its payload stamped, executed once", async () => {
    // A wallet of its own: its logins count against no other test's OTP limits.
    const payer = await createWallet(sandbox);
    const session = await otpLogin(sandbox.client, payer.emailMethodId, { code: "000000" });
    await fund(sandbox.client, payer.accountId, 50_000);
    const iban = await createBankAccount(sandbox.client, payer.customerId, "000", "EUR");
    const request: QuoteRequest = {
      source: { sourceType: "ACCOUNT", accountId: payer.accountId },
      destination: { destinationType: "ACCOUNT", accountId: iban.id },
      lockedCurrencySide: "SENDING",
      lockedCurrencyAmount: 5_000,
    };
    const before = await balanceOf(sandbox.client, payer.accountId);

    const paid = await payFromWallet(sandbox.client, request, session);
    expect(paid).toMatchObject({ status: "COMPLETED", totalSendingAmount: 5_000 });
    expect(JSON.parse(walletPayloadToSign(paid))).toMatchObject({
      type: "ACTIVITY_TYPE_EXECUTE_QUOTE",
      parameters: { quoteId: paid.id, sourceAccountId: payer.accountId },
    });
    expect(await balanceOf(sandbox.client, payer.accountId)).toBe(before - 5_000);

    // Made first, executed with a key: a retry with the key replays the execution.
    const { data: quote } = await sandbox.client.POST("/quotes", { body: request });
    const idempotencyKey = randomUUID();
    const executed = await executeWalletQuote(sandbox.client, quote!, session, { idempotencyKey });
    const replayed = await executeWalletQuote(sandbox.client, quote!, session, { idempotencyKey });
    expect(replayed).toEqual(executed);
    expect(await balanceOf(sandbox.client, payer.accountId)).toBe(before - 10_000);

    // A key of no session of this wallet is refused, and nothing moves.
    const refused = await payFromWallet(sandbox.client, request, generateP256KeyPair()).catch(
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(SandboxApiError);
    expect(refused).toMatchObject({ status: 401, code: "WALLET_SIGNATURE_INVALID" });
    expect(await balanceOf(sandbox.client, payer.accountId)).toBe(before - 10_000);

    // A quote from another kind of account has nothing for the wallet to sign.
    const usd = await createAccount(sandbox.client, payer.customerId, "USD", 10_000);
    const notFromWallet = await payFromWallet(
      sandbox.client,
      { ...request, source: { sourceType: "ACCOUNT", accountId: usd.id } },
      session,
    ).catch((err: unknown) => err);
    expect(notFromWallet).toBeInstanceOf(WalletFlowError);
    expect(notFromWallet).toMatchObject({ step: "wallet-quote" });
  }, 90_000);

  it("refreshes a session with a key it keeps by default, or with a sealed one on request", async () => {
    // A wallet of its own: its logins count against no other test's OTP limits.
    const own = await createWallet(sandbox);
    const login = await otpLogin(sandbox.client, own.emailMethodId, { code: "000000" });
    const setPrivacy = (privateEnabled: boolean, signer: Signer) =>
      signed(
        (header) =>
          sandbox.client.PATCH("/internal-accounts/{id}", {
            params: { path: { id: own.accountId }, header },
            body: { privateEnabled },
          }),
        signer,
      );
    const refusedBy = (signer: Signer) =>
      setPrivacy(true, signer).then(
        () => "accepted",
        (err: unknown) => err,
      );

    // Client-held (the default): the key made here is the session key; the API sent none.
    const held = await refreshSession(sandbox.client, login);
    expect(held.session).toMatchObject({ id: login.session.id, accountId: own.accountId });
    expect(held.session).not.toHaveProperty("encryptedSessionSigningKey");
    expect(held.signingKey.publicKeyHex).not.toBe(login.signingKey.publicKeyHex);
    expect(await refusedBy(login)).toMatchObject({ status: 401, code: "WALLET_SIGNATURE_INVALID" });
    expect(await setPrivacy(true, held)).toMatchObject({ privateEnabled: true });

    // Sealed (the legacy flow): the API made the key and sealed it to one made here.
    const sealed = await refreshSession(sandbox.client, held, { keyModel: "sealed" });
    expect(sealed.session.id).toBe(login.session.id);
    expect(sealed.session.encryptedSessionSigningKey).toEqual(expect.any(String));
    expect(await refusedBy(held)).toMatchObject({ status: 401, code: "WALLET_SIGNATURE_INVALID" });
    expect(await setPrivacy(false, sealed)).toMatchObject({ privateEnabled: false });

    // The listed session is the same one, still active.
    const { data: listed } = await sandbox.client.GET("/auth/sessions", {
      params: { query: { accountId: own.accountId } },
    });
    expect(listed?.data.map((s) => s.id)).toEqual([login.session.id]);
  });

  it("throws SandboxApiError with the API's code and reason", async () => {
    const refused = await otpLogin(sandbox.client, wallet.emailMethodId, { code: "123456" }).catch(
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(SandboxApiError);
    expect(refused).toMatchObject({
      status: 401,
      code: "UNAUTHORIZED",
      reason: "Invalid OTP code",
    });

    // A key of no session of this wallet.
    const stranger = generateP256KeyPair();
    const unsigned = await signed(
      (header) =>
        sandbox.client.PATCH("/internal-accounts/{id}", {
          params: { path: { id: wallet.accountId }, header },
          body: { privateEnabled: false },
        }),
      stranger,
    ).catch((err: unknown) => err);
    expect(unsigned).toMatchObject({ status: 401, code: "WALLET_SIGNATURE_INVALID" });
  });

  it("throws WalletFlowError when a credential is of another type or a bundle is not the enclave's", async () => {
    const notPasskey = await passkeyLogin(sandbox.client, wallet.emailMethodId, () => {
      throw new Error("no assertion is asked for an OTP credential");
    }).catch((err: unknown) => err);
    expect(notPasskey).toBeInstanceOf(WalletFlowError);
    expect(notPasskey).toMatchObject({ step: "passkey-challenge" });

    const otherEnclave = await otpLogin(sandbox.client, wallet.emailMethodId, {
      code: "000000",
      enclavePublicKey: generateP256KeyPair().publicKeyUncompressedHex,
    }).catch((err: unknown) => err);
    expect(otherEnclave).toBeInstanceOf(WalletFlowError);
    expect(otherEnclave).toMatchObject({ step: "otp-challenge" });
  });
});
