import { generateP256KeyPair } from "@payments-sandbox/crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  createWallet,
  errorOf,
  otpLogin,
  signedHeaders,
  type AuthMethodCreated,
  type SignedChallenge,
} from "./support/wallet.js";

// A wallet's credentials: opening it with one, adding, deleting, and keeping
// each platform's to itself.

describe.each(databases)("signed retries on %s", (kind) => {
  let sandbox: TestSandbox;
  const clock = new ManualClock();
  beforeAll(async () => {
    sandbox = await startSandbox(kind, { clock });
  });
  afterAll(async () => {
    await sandbox?.stop();
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
    // The file's first test also compiles each operation's checks on first use.
  }, 90_000);

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
