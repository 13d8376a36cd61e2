// Client-side helpers for embedded-wallet tests: what an integrator's app
// does with the keys (TEK, session keys), built only on public crypto.
import { randomUUID } from "node:crypto";
import type { Schemas } from "@payments-sandbox/client";
import {
  createStamp,
  generateP256KeyPair,
  openSessionKeyBundle,
  publicKeyFromPrivateKey,
  sealOtpBundle,
  verifyOtpTargetBundle,
  type P256KeyPair,
} from "@payments-sandbox/crypto";
import { expect } from "vitest";
import type { TestSandbox } from "../harness.js";
import { rememberAccount, withId } from "../money-helpers.js";

export type AuthSession = Schemas["AuthSession"];
export type AuthMethodCreated = Schemas["AuthMethodCreated"];
export type InternalAccount = Schemas["InternalAccount"];
export type SignedChallenge = Schemas["SignedRequestChallenge"] & { type?: string };

export interface Wallet {
  accountId: string;
  customerId: string;
  /** The wallet's first credential, EMAIL_OTP on the customer's email, made with the account. */
  emailMethodId: string;
  email: string;
  /** The customer's phone number, where an SMS_OTP credential's codes go. */
  phoneNumber: string;
}

/**
 * A customer holding USDB, so opened with its embedded wallet, and the
 * wallet's first credential: EMAIL_OTP on the customer's email, which the
 * wallet is opened with.
 */
export async function createWallet(sandbox: TestSandbox): Promise<Wallet> {
  const email = `user-${randomUUID().slice(0, 8)}@example.com`;
  const phoneNumber = `+1415555${String(Math.floor(Math.random() * 10_000)).padStart(4, "0")}`;
  const customer = await sandbox.client.POST("/customers", {
    body: {
      customerType: "INDIVIDUAL",
      fullName: "Ada Lovelace",
      email,
      phoneNumber,
      currencies: ["USDB"],
    },
  });
  expect(customer.response.status).toBe(201);
  const customerId = withId(customer.data!).id;
  const wallets = await sandbox.client.GET("/customers/internal-accounts", {
    params: { query: { customerId, type: "EMBEDDED_WALLET" } },
  });
  expect(wallets.data?.data).toHaveLength(1);
  const accountId = wallets.data!.data[0]!.id;
  const credentials = await sandbox.client.GET("/auth/credentials", {
    params: { query: { accountId } },
  });
  expect(credentials.data?.data).toEqual([
    expect.objectContaining({ type: "EMAIL_OTP", nickname: email, accountId }),
  ]);
  rememberAccount(accountId, { customerId, currency: "USDB" });
  return {
    accountId,
    customerId,
    emailMethodId: credentials.data!.data[0]!.id,
    email,
    phoneNumber,
  };
}

/** The platform's published OTP enclave key (GET /sandbox/keys). */
export async function enclavePublicKey(sandbox: TestSandbox): Promise<string> {
  const config = await sandbox.client.GET("/sandbox/keys");
  expect(config.response.status).toBe(200);
  return config.data!.otpEnclavePublicKey;
}

/** Asks for a code; checks the bundle's signature like a careful client would. */
type Challenge = Schemas["AuthCredentialChallenge"];

/** The challenge of a PASSKEY credential; anything else fails the test. */
export function passkeyChallenge(data: Challenge | undefined): Schemas["PasskeyAuthChallenge"] {
  if (data?.type !== "PASSKEY") throw new Error(`not a PASSKEY challenge: ${JSON.stringify(data)}`);
  return data;
}

/** The challenge of an OTP credential; anything else fails the test. */
export function otpChallenge(data: Challenge | undefined): Schemas["OtpAuthChallenge"] {
  if (data?.type !== "EMAIL_OTP" && data?.type !== "SMS_OTP") {
    throw new Error(`not an OTP challenge: ${JSON.stringify(data)}`);
  }
  return data;
}

export async function requestOtp(
  sandbox: TestSandbox,
  methodId: string,
): Promise<{ bundle: string; targetPublic: string }> {
  const res = await sandbox.client.POST("/auth/credentials/{id}/challenge", {
    params: { path: { id: methodId } },
    body: {},
  });
  expect(res.response.status).toBe(200);
  const bundle = otpChallenge(res.data).otpEncryptionTargetBundle!;
  const data = verifyOtpTargetBundle(bundle, await enclavePublicKey(sandbox));
  return { bundle, targetPublic: data.targetPublic };
}

export function verifyOtp(
  sandbox: TestSandbox,
  methodId: string,
  encryptedOtpBundle: string,
  headers: {
    "Service-Wallet-Signature"?: string;
    "Grid-Wallet-Signature"?: string;
    "Request-Id"?: string;
  } = {},
  type: "EMAIL_OTP" | "SMS_OTP" = "EMAIL_OTP",
) {
  return sandbox.client.POST("/auth/credentials/{id}/verify", {
    params: { path: { id: methodId }, header: headers },
    body: { type, encryptedOtpBundle },
  });
}

/** A full OTP login with our crypto: returns the session and its signing key (the TEK). */
export async function otpLogin(
  sandbox: TestSandbox,
  methodId: string,
  type: "EMAIL_OTP" | "SMS_OTP" = "EMAIL_OTP",
): Promise<{ session: AuthSession; key: P256KeyPair }> {
  const { targetPublic } = await requestOtp(sandbox, methodId);
  const tek = generateP256KeyPair();
  const encrypted = await sealOtpBundle({
    otpCode: "000000",
    tekPublicKeyHex: tek.publicKeyHex,
    targetPublicKeyHex: targetPublic,
  });
  const first = await verifyOtp(sandbox, methodId, encrypted, {}, type);
  expect(first.response.status).toBe(202);
  const challenge = first.data as SignedChallenge;
  const retry = await verifyOtp(
    sandbox,
    methodId,
    encrypted,
    {
      "Service-Wallet-Signature": createStamp(challenge.payloadToSign, tek.privateKeyHex),
      "Request-Id": challenge.requestId,
    },
    type,
  );
  expect(retry.response.status).toBe(200);
  return { session: retry.data as AuthSession, key: tek };
}

/** Headers of a signed retry: the stamp of `payloadToSign` by `privateKeyHex`. */
export function signedHeaders(challenge: SignedChallenge, privateKeyHex: string) {
  return {
    "Service-Wallet-Signature": createStamp(challenge.payloadToSign, privateKeyHex),
    "Request-Id": challenge.requestId,
  };
}

/** Adds a credential to a wallet that has one: the signed retry, stamped by `privateKeyHex`. Returns its id. */
export async function addCredential(
  sandbox: TestSandbox,
  body: Schemas["CreateAuthCredentialRequest"],
  privateKeyHex: string,
): Promise<string> {
  const pending = await sandbox.client.POST("/auth/credentials", { body });
  expect(pending.response.status).toBe(202);
  const added = await sandbox.client.POST("/auth/credentials", {
    params: { header: signedHeaders(pending.data as SignedChallenge, privateKeyHex) },
    body,
  });
  expect(added.response.status).toBe(201);
  return (added.data as { id: string }).id;
}

/** Opens an encryptedSessionSigningKey and checks it is a usable key pair. */
export async function openSessionKey(
  encrypted: string,
  clientPrivateKeyHex: string,
): Promise<P256KeyPair> {
  const privateKeyHex = await openSessionKeyBundle(encrypted, clientPrivateKeyHex);
  return {
    privateKeyHex,
    publicKeyHex: publicKeyFromPrivateKey(privateKeyHex, true),
    publicKeyUncompressedHex: publicKeyFromPrivateKey(privateKeyHex, false),
  };
}

/** An error body as the client saw it. */
export interface ErrorBody {
  status: number;
  code: string;
  message: string;
  reason?: string;
  details?: Record<string, unknown>;
}

export function errorOf(result: { error?: unknown }): ErrorBody {
  return result.error as ErrorBody;
}
