import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateP256KeyPair } from "../src/crypto/p256-keys.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  addCredential,
  createWallet,
  otpLogin,
  signedHeaders,
  type SignedChallenge,
} from "./support/wallet.js";

// A customer's email is where its wallets' EMAIL_OTP codes go: changing it is
// a signed retry that changes the customer and those credentials together.
describe.each(databases)("changing a wallet customer's email on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind);
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const patchEmail = (customerId: string, email: string, header = {}) =>
    sandbox.client.PATCH("/customers/{customerId}", {
      params: { path: { customerId }, header },
      body: { customerType: "INDIVIDUAL", email },
    });

  const credentialEmails = async (accountId: string) => {
    const { data } = await sandbox.client.GET("/auth/credentials", {
      params: { query: { accountId } },
    });
    return data!.data.filter((m) => m.type === "EMAIL_OTP").map((m) => m.nickname);
  };

  it("answers 202, then changes the customer and its EMAIL_OTP credential on the signed retry", async () => {
    const wallet = await createWallet(sandbox);
    const { key } = await otpLogin(sandbox, wallet.emailMethodId);
    const first = await patchEmail(wallet.customerId, "new.address@example.com");
    expect(first.response.status).toBe(202);
    const challenge = first.data as SignedChallenge;
    expect(JSON.parse(challenge.payloadToSign)).toMatchObject({
      type: "ACTIVITY_TYPE_UPDATE_USER_EMAIL",
      parameters: { userId: wallet.customerId, userEmail: "new.address@example.com" },
    });
    // Nothing changed yet.
    const before = await sandbox.client.GET("/customers/{customerId}", {
      params: { path: { customerId: wallet.customerId } },
    });
    expect(before.data?.email).toBe(wallet.email);

    // Another key, or another body, does not pass.
    const stranger = generateP256KeyPair();
    const forged = await patchEmail(
      wallet.customerId,
      "new.address@example.com",
      signedHeaders(challenge, stranger.privateKeyHex),
    );
    expect(forged.error).toMatchObject({ status: 401, code: "WALLET_SIGNATURE_INVALID" });
    const otherBody = await patchEmail(
      wallet.customerId,
      "other@example.com",
      signedHeaders(challenge, key.privateKeyHex),
    );
    expect(otherBody.error).toMatchObject({ status: 401, code: "WALLET_SIGNATURE_BODY_MISMATCH" });

    const signed = await patchEmail(
      wallet.customerId,
      "new.address@example.com",
      signedHeaders(challenge, key.privateKeyHex),
    );
    expect(signed.response.status).toBe(200);
    expect(signed.data).toMatchObject({ email: "new.address@example.com" });
    expect(await credentialEmails(wallet.accountId)).toEqual(["new.address@example.com"]);
    // The challenge is used up: answering it again for another change fails.
    const reused = await sandbox.client.PATCH("/customers/{customerId}", {
      params: {
        path: { customerId: wallet.customerId },
        header: signedHeaders(challenge, key.privateKeyHex),
      },
      body: { customerType: "INDIVIDUAL", email: "third@example.com" },
    });
    expect(reused.error).toMatchObject({ status: 401 });
    expect(await credentialEmails(wallet.accountId)).toEqual(["new.address@example.com"]);
  });

  it("refuses the retry with 409 when the customer's wallet credentials changed meanwhile", async () => {
    const wallet = await createWallet(sandbox);
    const email = await otpLogin(sandbox, wallet.emailMethodId);
    // A second credential, SMS_OTP, gives the wallet a session that outlives the EMAIL_OTP one.
    const sms = { type: "SMS_OTP" as const, accountId: wallet.accountId };
    const smsId = await addCredential(sandbox, sms, email.key.privateKeyHex);
    const phone = await otpLogin(sandbox, smsId, "SMS_OTP");

    const first = await patchEmail(wallet.customerId, "moved@example.com");
    const challenge = first.data as SignedChallenge;
    // Meanwhile the EMAIL_OTP credential the change concerns is revoked...
    const path = { path: { id: wallet.emailMethodId } };
    const revoke = await sandbox.client.DELETE("/auth/credentials/{id}", { params: path });
    expect(revoke.response.status).toBe(202);
    const revoked = await sandbox.client.DELETE("/auth/credentials/{id}", {
      params: {
        ...path,
        header: signedHeaders(revoke.data as SignedChallenge, phone.key.privateKeyHex),
      },
    });
    expect(revoked.response.ok).toBe(true);
    // ... and another takes its place: the set the challenge bound is gone.
    const replacement = { type: "EMAIL_OTP" as const, accountId: wallet.accountId };
    await addCredential(sandbox, replacement, phone.key.privateKeyHex);

    const retry = await patchEmail(
      wallet.customerId,
      "moved@example.com",
      signedHeaders(challenge, phone.key.privateKeyHex),
    );
    expect(retry.error).toMatchObject({ status: 409, code: "EMAIL_OTP_CREDENTIAL_SET_CHANGED" });
    const customer = await sandbox.client.GET("/customers/{customerId}", {
      params: { path: { customerId: wallet.customerId } },
    });
    expect(customer.data?.email).toBe(wallet.email);
  });

  it("changes other fields, or the email of a customer without wallet credentials, at once", async () => {
    const wallet = await createWallet(sandbox);
    const region = await sandbox.client.PATCH("/customers/{customerId}", {
      params: { path: { customerId: wallet.customerId } },
      body: { customerType: "INDIVIDUAL", region: "US" } as never,
    });
    // region is not a field of an update: the contract refuses it.
    expect(region.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    const phone = await sandbox.client.PATCH("/customers/{customerId}", {
      params: { path: { customerId: wallet.customerId } },
      body: { customerType: "INDIVIDUAL", phoneNumber: "+14155550199" },
    });
    // No SMS_OTP credential is tied to the phone number yet.
    expect(phone.response.status).toBe(200);
    expect(phone.data).toMatchObject({ phoneNumber: "+14155550199" });

    const plain = await sandbox.client.POST("/customers", {
      body: { customerType: "INDIVIDUAL", fullName: "No Wallet", email: "nw@example.com" },
    });
    const direct = await patchEmail(plain.data!.id!, "nw2@example.com");
    expect(direct.response.status).toBe(200);
    expect(direct.data).toMatchObject({ email: "nw2@example.com" });
  });
});
