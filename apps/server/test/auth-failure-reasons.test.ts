// Every authentication failure (401) of the embedded-wallet operations and
// of the signed retries names the check that failed in `reason` (the spec's
// sandbox error rules): each signed flow is driven through every way its
// retry can fail, and each answer is checked for its code and a reason.
import { createStamp, generateP256KeyPair, sealOtpBundle } from "@payments-sandbox/crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  addCredential,
  createWallet,
  errorOf,
  otpLogin,
  requestOtp,
  verifyOtp,
  type SignedChallenge,
} from "./support/wallet.js";

type WalletHeaders = {
  "Service-Wallet-Signature"?: string;
  "Grid-Wallet-Signature"?: string;
  "Request-Id"?: string;
};

/** One call of a signed flow, with the same body on every leg unless `other` asks for another. */
type Call = (
  headers: WalletHeaders,
  other?: boolean,
) => Promise<{ response: Response; data?: unknown; error?: unknown }>;

describe.each(databases)("reasons of authentication failures on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  /** A 401 with this code and a non-empty reason. */
  function expectReason(res: { response: Response; error?: unknown }, code: string, what: string) {
    expect(res.response.status, what).toBe(401);
    const error = errorOf(res);
    expect(error.code, what).toBe(code);
    expect(typeof error.reason, what).toBe("string");
    expect(error.reason!.trim().length, what).toBeGreaterThan(0);
  }

  /** Each way a signed retry of `call` fails, signed by `signer` (its session key or TEK). */
  async function everyRetryFailure(name: string, call: Call, signer: string, another: Call) {
    const first = await call({});
    expect(first.response.status, name).toBe(202);
    const challenge = first.data as SignedChallenge;
    const stamp = createStamp(challenge.payloadToSign, signer);
    const requestId = challenge.requestId;
    const stranger = generateP256KeyPair().privateKeyHex;
    const cases: [string, string, WalletHeaders, boolean?][] = [
      ["no signature", "WALLET_SIGNATURE_MISSING", { "Request-Id": requestId }],
      ["no Request-Id", "REQUEST_ID_MISSING", { "Service-Wallet-Signature": stamp }],
      [
        "malformed stamp",
        "WALLET_SIGNATURE_MALFORMED",
        { "Service-Wallet-Signature": "not-a-stamp", "Request-Id": requestId },
      ],
      [
        "two different stamps",
        "WALLET_SIGNATURE_MALFORMED",
        {
          "Service-Wallet-Signature": stamp,
          "Grid-Wallet-Signature": createStamp(challenge.payloadToSign, stranger),
          "Request-Id": requestId,
        },
      ],
      [
        "another body",
        "WALLET_SIGNATURE_BODY_MISMATCH",
        { "Service-Wallet-Signature": stamp, "Request-Id": requestId },
        true,
      ],
      [
        "stamp over something else",
        "WALLET_SIGNATURE_INVALID",
        {
          "Service-Wallet-Signature": createStamp(`${challenge.payloadToSign} `, signer),
          "Request-Id": requestId,
        },
      ],
      [
        "stamp by another key",
        "WALLET_SIGNATURE_INVALID",
        {
          "Service-Wallet-Signature": createStamp(challenge.payloadToSign, stranger),
          "Request-Id": requestId,
        },
      ],
      [
        "unknown Request-Id",
        "UNAUTHORIZED",
        {
          "Service-Wallet-Signature": stamp,
          "Request-Id": "Request:00000000-0000-4000-8000-000000000000",
        },
      ],
    ];
    for (const [what, code, headers, other] of cases) {
      expectReason(await call(headers, other), code, `${name}: ${what}`);
    }
    // A Request-Id issued for another action.
    const foreign = (await another({})).data as SignedChallenge;
    expectReason(
      await call({
        "Service-Wallet-Signature": createStamp(foreign.payloadToSign, signer),
        "Request-Id": foreign.requestId,
      }),
      "WALLET_SIGNATURE_BODY_MISMATCH",
      `${name}: another action's Request-Id`,
    );
  }

  /** The signed flows of a wallet, each with the key that signs it and another body. */
  async function signedFlows(): Promise<Record<string, { call: Call; signer: string }>> {
    const wallet = await createWallet(sandbox);
    const login = await otpLogin(sandbox, wallet.emailMethodId);
    const second = await otpLogin(sandbox, wallet.emailMethodId);
    const signer = login.key.privateKeyHex;
    // A wallet with two credentials, one of which can be deleted.
    const other = await createWallet(sandbox);
    const otherLogin = await otpLogin(sandbox, other.emailMethodId);
    const smsId = await addCredential(
      sandbox,
      { type: "SMS_OTP", accountId: other.accountId },
      otherLogin.key.privateKeyHex,
    );
    const key = () => generateP256KeyPair().publicKeyUncompressedHex;
    const exportKey = key();
    const refreshKey = key();
    const flow = (call: Call, by = signer) => ({ call, signer: by });
    return {
      "wallet privacy": flow((header, another) =>
        sandbox.client.PATCH("/internal-accounts/{id}", {
          params: { path: { id: wallet.accountId }, header },
          body: { privateEnabled: !another },
        }),
      ),
      "wallet export": flow((header, another) =>
        sandbox.client.POST("/internal-accounts/{id}/export", {
          params: { path: { id: wallet.accountId }, header },
          body: { clientPublicKey: another ? key() : exportKey },
        }),
      ),
      "credential creation": flow((header, another) =>
        sandbox.client.POST("/auth/credentials", {
          params: { header },
          body: { type: another ? "EMAIL_OTP" : "SMS_OTP", accountId: wallet.accountId },
        }),
      ),
      "credential deletion": flow(
        (header, another) =>
          sandbox.client.DELETE("/auth/credentials/{id}", {
            params: { path: { id: another ? other.emailMethodId : smsId }, header },
          }),
        otherLogin.key.privateKeyHex,
      ),
      "session refresh": flow((header, another) =>
        sandbox.client.POST("/auth/sessions/{id}/refresh", {
          params: { path: { id: login.session.id }, header },
          body: { clientPublicKey: another ? key() : refreshKey },
        }),
      ),
      "session revocation": flow((header, another) =>
        sandbox.client.DELETE("/auth/sessions/{id}", {
          params: { path: { id: another ? second.session.id : login.session.id }, header },
        }),
      ),
      "customer email change": flow((header, another) =>
        sandbox.client.PATCH("/customers/{customerId}", {
          params: { path: { customerId: wallet.customerId }, header },
          body: {
            customerType: "INDIVIDUAL",
            email: another ? "other.address@example.com" : "new.address@example.com",
          },
        }),
      ),
    };
  }

  it("names the failed check on every failure of every signed retry", async () => {
    const flows = await signedFlows();
    const names = Object.keys(flows);
    for (const [index, name] of names.entries()) {
      const { call, signer } = flows[name]!;
      // Another flow's challenge stands in for "another action".
      const another = flows[names[(index + 1) % names.length]!]!.call;
      await everyRetryFailure(name, call, signer, another);
    }
  });

  it("names the failed check on every failure of the OTP login's retry", async () => {
    const wallet = await createWallet(sandbox);
    const tek = generateP256KeyPair();
    const { targetPublic } = await requestOtp(sandbox, wallet.emailMethodId);
    const seal = () =>
      sealOtpBundle({
        otpCode: "000000",
        tekPublicKeyHex: tek.publicKeyHex,
        targetPublicKeyHex: targetPublic,
      });
    // Two sealings of the same code differ (each has its own ephemeral key).
    const bundle = await seal();
    const otherBundle = await seal();
    const verify: Call = (headers, other) =>
      verifyOtp(sandbox, wallet.emailMethodId, other ? otherBundle : bundle, headers);
    const privacy: Call = (header) =>
      sandbox.client.PATCH("/internal-accounts/{id}", {
        params: { path: { id: wallet.accountId }, header },
        body: { privateEnabled: true },
      });
    await everyRetryFailure("OTP verify", verify, tek.privateKeyHex, privacy);

    // A wrong code.
    const wrong = await sealOtpBundle({
      otpCode: "123456",
      tekPublicKeyHex: tek.publicKeyHex,
      targetPublicKeyHex: (await requestOtp(sandbox, wallet.emailMethodId)).targetPublic,
    });
    expectReason(
      await verifyOtp(sandbox, wallet.emailMethodId, wrong),
      "UNAUTHORIZED",
      "OTP verify: wrong code",
    );
  });

  it("names the failed check when the API credentials fail on /auth/*", async () => {
    const wallet = await createWallet(sandbox);
    const path = `/auth/credentials?accountId=${encodeURIComponent(wallet.accountId)}`;
    const basic = (text: string) => `Basic ${Buffer.from(text).toString("base64")}`;
    const attempts: [string, string | null][] = [
      ["no Authorization", null],
      ["another scheme", "Digest abc"],
      ["Basic without a colon", basic("no-colon")],
      ["unknown secret", basic(`${sandbox.credentials.tokenId}:wrong`)],
      ["API secret as a bearer token", `Bearer ${sandbox.credentials.secret}`],
      ["unknown agent token", "Bearer agt_unknown"],
    ];
    for (const [what, auth] of attempts) {
      const res = await sandbox.rawFetch(path, { auth });
      expect(res.status, what).toBe(401);
      const body = (await res.json()) as { code: string; reason?: string };
      expect(body.code, what).toBe("UNAUTHORIZED");
      expect(body.reason?.trim(), what).toBeTruthy();
    }
  });
});
