import { randomBytes } from "node:crypto";
import { decryptCredentialBundle } from "@turnkey/crypto";
import { generateP256KeyPair, type P256KeyPair } from "@payments-sandbox/crypto";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { SoftwareAuthenticator, type Assertion } from "./support/authenticator.js";
import {
  createWallet,
  errorOf,
  otpLogin,
  passkeyChallenge,
  signedHeaders,
  type AuthMethodCreated,
  type AuthSession,
  type SignedChallenge,
  type Wallet,
} from "./support/wallet.js";

/** Registers a passkey on a wallet (a signed retry by `sessionKey`). */
async function registerPasskey(
  sandbox: TestSandbox,
  wallet: Wallet,
  sessionKey: P256KeyPair,
  authenticator: SoftwareAuthenticator,
  nickname = "Test laptop",
) {
  const challenge = randomBytes(32).toString("base64url");
  const body = {
    type: "PASSKEY" as const,
    accountId: wallet.accountId,
    nickname,
    challenge,
    attestation: authenticator.create(challenge),
  };
  const first = await sandbox.client.POST("/auth/credentials", { body });
  expect(first.response.status).toBe(202);
  expect((first.data as SignedChallenge).type).toBe("PASSKEY");
  const created = await sandbox.client.POST("/auth/credentials", {
    params: { header: signedHeaders(first.data as SignedChallenge, sessionKey.privateKeyHex) },
    body,
  });
  expect(created.response.status).toBe(201);
  return created.data as AuthMethodCreated;
}

describe.each(databases)("passkeys on %s", (kind) => {
  let sandbox: TestSandbox;
  const clock = new ManualClock();
  let wallet: Wallet;
  let authenticator: SoftwareAuthenticator;
  let methodId: string;
  let otherMethodId: string;

  beforeAll(async () => {
    // The software authenticator signs for an app page at http://localhost:3000.
    sandbox = await startSandbox(kind, { clock, env: { PASSKEY_ORIGIN: "http://localhost:3000" } });
    wallet = await createWallet(sandbox);
    const sessionKey = (await otpLogin(sandbox, wallet.emailMethodId)).key;
    authenticator = new SoftwareAuthenticator();
    const method = await registerPasskey(sandbox, wallet, sessionKey, authenticator);
    expect(method).toMatchObject({
      type: "PASSKEY",
      credentialId: authenticator.credentialId,
      nickname: "Test laptop",
    });
    methodId = method.id;
    otherMethodId = (
      await registerPasskey(sandbox, wallet, sessionKey, new SoftwareAuthenticator(), "Phone")
    ).id;
  });
  afterAll(async () => {
    await sandbox?.stop();
  });
  beforeEach(() => {
    // Fresh rate-limit windows for each test.
    clock.advance(16 * 60_000);
  });

  async function startLogin(id = methodId) {
    const client = generateP256KeyPair();
    const res = await sandbox.client.POST("/auth/credentials/{id}/challenge", {
      params: { path: { id } },
      body: { clientPublicKey: client.publicKeyUncompressedHex },
    });
    expect(res.response.status).toBe(200);
    return { client, challenge: passkeyChallenge(res.data) };
  }

  function verify(assertion: Assertion, requestId?: string, id = methodId) {
    return sandbox.client.POST("/auth/credentials/{id}/verify", {
      params: { path: { id }, header: requestId ? { "Request-Id": requestId } : {} },
      body: { type: "PASSKEY", assertion },
    });
  }

  async function expectRejected(
    result: ReturnType<typeof verify>,
    reason: RegExp,
    code = "UNAUTHORIZED",
  ) {
    const res = await result;
    expect(res.response.status).toBe(401);
    expect(errorOf(res).code).toBe(code);
    expect(errorOf(res).reason ?? "").toMatch(reason);
  }

  it("logs in with a real assertion; the session key is sealed to the challenge's clientPublicKey", async () => {
    const { client, challenge } = await startLogin();
    expect(challenge).toMatchObject({
      id: methodId,
      type: "PASSKEY",
      credentialId: authenticator.credentialId,
    });
    expect(challenge.challenge).toMatch(/^[0-9a-f]{64}$/);
    expect(challenge.requestId).toMatch(/^Request:/);
    expect(new Date(challenge.expiresAt!).getTime()).toBe(clock.now().getTime() + 5 * 60_000);

    const res = await verify(authenticator.get(challenge.challenge!), challenge.requestId);
    expect(res.response.status).toBe(200);
    const session = res.data as AuthSession;
    expect(session).toMatchObject({
      type: "PASSKEY",
      accountId: wallet.accountId,
      credentialId: authenticator.credentialId,
      nickname: "Test laptop",
    });
    const key = decryptCredentialBundle(session.encryptedSessionSigningKey!, client.privateKeyHex);

    // The session key signs wallet actions.
    const first = await sandbox.client.PATCH("/internal-accounts/{id}", {
      params: { path: { id: wallet.accountId } },
      body: { privateEnabled: false },
    });
    const done = await sandbox.client.PATCH("/internal-accounts/{id}", {
      params: {
        path: { id: wallet.accountId },
        header: signedHeaders(first.data as SignedChallenge, key),
      },
      body: { privateEnabled: false },
    });
    expect(done.response.status).toBe(200);
  });

  it("uses each Request-Id once", async () => {
    const { challenge } = await startLogin();
    expect(
      (await verify(authenticator.get(challenge.challenge!), challenge.requestId)).response.status,
    ).toBe(200);
    await expectRejected(
      verify(authenticator.get(challenge.challenge!), challenge.requestId),
      /already consumed/,
    );
  });

  it("requires a Request-Id of this credential's pending challenge", async () => {
    const { challenge } = await startLogin();
    await expectRejected(
      verify(authenticator.get(challenge.challenge!)),
      /without Request-Id/,
      "REQUEST_ID_MISSING",
    );
    await expectRejected(
      verify(
        authenticator.get(challenge.challenge!),
        "Request:00000000-0000-4000-8000-000000000000",
      ),
      /unknown/,
    );
    const other = await startLogin(otherMethodId);
    await expectRejected(
      verify(authenticator.get(other.challenge.challenge!), other.challenge.requestId),
      /not a passkey challenge of this credential/,
    );
    clock.advance(5 * 60_000);
    await expectRejected(
      verify(authenticator.get(challenge.challenge!), challenge.requestId),
      /expired/,
    );
  });

  it("refuses an assertion over another challenge", async () => {
    const { challenge } = await startLogin();
    const wrong = "ab".repeat(32);
    await expectRejected(
      verify(authenticator.get(wrong), challenge.requestId),
      /Unexpected authentication response challenge/,
    );
  });

  it("refuses an assertion from another origin or relying party", async () => {
    const { challenge } = await startLogin();
    await expectRejected(
      verify(
        authenticator.get(challenge.challenge!, { origin: "https://evil.example" }),
        challenge.requestId,
      ),
      /origin/,
    );
    await expectRejected(
      verify(
        authenticator.get(challenge.challenge!, { rpId: "evil.example" }),
        challenge.requestId,
      ),
      /RP ID/i,
    );
  });

  it("refuses an assertion without the user-present flag", async () => {
    const { challenge } = await startLogin();
    await expectRejected(
      verify(authenticator.get(challenge.challenge!, { userPresent: false }), challenge.requestId),
      /User not present/,
    );
  });

  it("refuses a bad signature and an assertion by another credential", async () => {
    const { challenge } = await startLogin();
    await expectRejected(
      verify(
        authenticator.get(challenge.challenge!, { signOver: Buffer.from("something else") }),
        challenge.requestId,
      ),
      /signature/i,
    );
    const stranger = new SoftwareAuthenticator();
    await expectRejected(
      verify(stranger.get(challenge.challenge!), challenge.requestId),
      /credentialId is not this credential's passkey/,
    );
  });

  it("refuses a counter that does not increase", async () => {
    const first = await startLogin();
    expect(
      (await verify(authenticator.get(first.challenge.challenge!), first.challenge.requestId))
        .response.status,
    ).toBe(200);
    const { challenge } = await startLogin();
    await expectRejected(
      verify(
        authenticator.get(challenge.challenge!, { counter: authenticator.counter }),
        challenge.requestId,
      ),
      /counter/,
    );
  });

  it("accepts the legacy signature sandbox-valid-passkey-signature with a pending Request-Id", async () => {
    const { client, challenge } = await startLogin();
    const legacy = {
      ...authenticator.get(challenge.challenge!),
      signature: "sandbox-valid-passkey-signature",
    };
    await expectRejected(verify(legacy), /without Request-Id/, "REQUEST_ID_MISSING");
    const res = await verify(legacy, challenge.requestId);
    expect(res.response.status).toBe(200);
    expect(
      decryptCredentialBundle(
        (res.data as AuthSession).encryptedSessionSigningKey!,
        client.privateKeyHex,
      ),
    ).toMatch(/^[0-9a-f]{64}$/);
    await expectRejected(verify(legacy, challenge.requestId), /already consumed/);
  });

  it("requires clientPublicKey for a passkey challenge", async () => {
    const res = await sandbox.client.POST("/auth/credentials/{id}/challenge", {
      params: { path: { id: methodId } },
      body: {},
    });
    expect(res.response.status).toBe(400);
  });

  it("refuses a registration with a bad attestation, and a duplicate passkey", async () => {
    // Checked on the first leg, before anything is signed.
    const another = new SoftwareAuthenticator();
    const challenge = randomBytes(32).toString("base64url");
    const register = (attestation: ReturnType<SoftwareAuthenticator["create"]>, c = challenge) =>
      sandbox.client.POST("/auth/credentials", {
        body: {
          type: "PASSKEY",
          accountId: wallet.accountId,
          nickname: "X",
          challenge: c,
          attestation,
        },
      });
    const wrongOrigin = await register(
      another.create(challenge, { origin: "https://evil.example" }),
    );
    expect(wrongOrigin.response.status).toBe(400);
    expect(errorOf(wrongOrigin).reason).toMatch(/origin/);
    const wrongChallenge = await register(another.create(challenge), "c29tZXRoaW5nLWVsc2U");
    expect(wrongChallenge.response.status).toBe(400);
    expect(errorOf(wrongChallenge).reason).toMatch(/challenge/);
    const wrongRp = await register(another.create(challenge, { rpId: "evil.example" }));
    expect(wrongRp.response.status).toBe(400);
    expect(errorOf(wrongRp).reason).toMatch(/RP ID/i);

    const duplicate = await register(authenticator.create(challenge));
    expect(duplicate.response.status).toBe(400);
    expect(errorOf(duplicate).code).toBe("PASSKEY_CREDENTIAL_ALREADY_EXISTS");
  });
});

describe.each(databases)("passkeys with legacy shortcuts off on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox(kind, {
      env: { SANDBOX_LEGACY_SHORTCUTS: "false", PASSKEY_ORIGIN: "http://localhost:3000" },
    });
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  it("verifies sandbox-valid-passkey-signature like any signature, and refuses it", async () => {
    const wallet = await createWallet(sandbox);
    const { key } = await otpLogin(sandbox, wallet.emailMethodId);
    const authenticator = new SoftwareAuthenticator();
    const method = await registerPasskey(sandbox, wallet, key, authenticator);
    const client = generateP256KeyPair();
    const challenge = passkeyChallenge(
      (
        await sandbox.client.POST("/auth/credentials/{id}/challenge", {
          params: { path: { id: method.id } },
          body: { clientPublicKey: client.publicKeyUncompressedHex },
        })
      ).data,
    );
    const res = await sandbox.client.POST("/auth/credentials/{id}/verify", {
      params: { path: { id: method.id }, header: { "Request-Id": challenge.requestId } },
      body: {
        type: "PASSKEY",
        assertion: {
          ...authenticator.get(challenge.challenge),
          signature: "sandbox-valid-passkey-signature",
        },
      },
    });
    expect(res.response.status).toBe(401);
  });
});
