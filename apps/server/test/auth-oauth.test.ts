import { decryptCredentialBundle } from "@turnkey/crypto";
import {
  base64urlEncode,
  generateP256KeyPair,
  publicKeyFromPrivateKey,
  sha256Hex,
} from "@payments-sandbox/crypto";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ManualClock } from "../src/clock.js";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  createWallet,
  errorOf,
  otpLogin,
  signedHeaders,
  type AuthMethodCreated,
  type AuthSession,
  type SignedChallenge,
} from "./support/wallet.js";

const ISSUER = "https://accounts.google.com";
const AUDIENCE = "401583625938-sandbox.apps.googleusercontent.com";

type Claims = Record<string, unknown>;

/** A JWT-shaped token with a dummy signature, as the sandbox accepts for issuers without a key set. */
function unsignedToken(claims: Claims): string {
  const header = base64urlEncode(JSON.stringify({ alg: "RS256", typ: "JWT", kid: "test" }));
  return `${header}.${base64urlEncode(JSON.stringify(claims))}.ZHVtbXktc2lnbmF0dXJl`;
}

async function registerOauth(sandbox: TestSandbox, oidcToken: string) {
  const wallet = await createWallet(sandbox);
  const { key } = await otpLogin(sandbox, wallet.emailMethodId);
  const body = { type: "OAUTH" as const, accountId: wallet.accountId, oidcToken };
  const first = await sandbox.client.POST("/auth/credentials", { body });
  expect(first.response.status).toBe(202);
  const created = await sandbox.client.POST("/auth/credentials", {
    params: { header: signedHeaders(first.data as SignedChallenge, key.privateKeyHex) },
    body,
  });
  expect(created.response.status).toBe(201);
  return { wallet, method: created.data as AuthMethodCreated };
}

describe.each(databases)("OAuth login on %s", (kind) => {
  let sandbox: TestSandbox;
  const clock = new ManualClock();
  let methodId: string;
  let accountId: string;
  const sub = "110169484474386276334";

  /** Claims of a fresh, valid login token for `clientPublicKey`. */
  function claims(clientPublicKey: string, overrides: Claims = {}): Claims {
    const now = Math.floor(clock.now().getTime() / 1000);
    return {
      iss: ISSUER,
      aud: AUDIENCE,
      sub,
      email: "jane.doe@example.com",
      iat: now,
      exp: now + 3600,
      nonce: sha256Hex(clientPublicKey),
      ...overrides,
    };
  }

  function verify(oidcToken: string, clientPublicKey: string) {
    return sandbox.client.POST("/auth/credentials/{id}/verify", {
      params: { path: { id: methodId } },
      body: { type: "OAUTH", oidcToken, clientPublicKey },
    });
  }

  beforeAll(async () => {
    sandbox = await startSandbox(kind, { clock });
    const { nonce: _nonce, ...registration } = claims(
      generateP256KeyPair().publicKeyUncompressedHex,
    );
    const { wallet, method } = await registerOauth(sandbox, unsignedToken(registration));
    expect(method).toMatchObject({ type: "OAUTH", nickname: "jane.doe@example.com" });
    methodId = method.id;
    accountId = wallet.accountId;
  });
  afterAll(async () => {
    await sandbox?.stop();
  });
  beforeEach(() => {
    // Each test starts with empty rate-limit windows.
    clock.advance(16 * 60_000);
  });

  it("issues a session whose key is sealed to clientPublicKey and signs wallet actions", async () => {
    const client = generateP256KeyPair();
    const res = await verify(
      unsignedToken(claims(client.publicKeyUncompressedHex)),
      client.publicKeyUncompressedHex,
    );
    expect(res.response.status).toBe(200);
    const session = res.data as AuthSession;
    expect(session).toMatchObject({ type: "OAUTH", accountId, nickname: "jane.doe@example.com" });
    // The reference client library decrypts the session key.
    const sessionKey = decryptCredentialBundle(
      session.encryptedSessionSigningKey!,
      client.privateKeyHex,
    );
    expect(sessionKey).toMatch(/^[0-9a-f]{64}$/);
    expect(publicKeyFromPrivateKey(sessionKey)).not.toBe(client.publicKeyHex);

    const first = await sandbox.client.PATCH("/internal-accounts/{id}", {
      params: { path: { id: accountId } },
      body: { privateEnabled: true },
    });
    const done = await sandbox.client.PATCH("/internal-accounts/{id}", {
      params: {
        path: { id: accountId },
        header: signedHeaders(first.data as SignedChallenge, sessionKey),
      },
      body: { privateEnabled: true },
    });
    expect(done.response.status).toBe(200);

    const list = await sandbox.client.GET("/auth/sessions", {
      params: { query: { accountId } },
    });
    const listed = list.data?.data.find((s) => s.id === session.id);
    expect(listed).toBeDefined();
    expect(listed).not.toHaveProperty("encryptedSessionSigningKey");
  });

  const accepted: [string, (key: string) => Claims][] = [
    ["aud as a one-element array", (k) => claims(k, { aud: [AUDIENCE] })],
    ["iat 64 seconds old (within the 5 s skew)", (k) => claims(k, { iat: nowS() - 64 })],
    ["iat 4 seconds in the future (within the skew)", (k) => claims(k, { iat: nowS() + 4 })],
  ];
  it.each(accepted)("accepts %s", async (_name, build) => {
    const client = generateP256KeyPair();
    const key = client.publicKeyUncompressedHex;
    const res = await verify(unsignedToken(build(key)), key);
    expect(res.response.status).toBe(200);
  });

  function nowS(): number {
    return Math.floor(clock.now().getTime() / 1000);
  }

  const refused: [string, (key: string) => Claims, RegExp][] = [
    ["an unsupported issuer", (k) => claims(k, { iss: "https://evil.example" }), /iss/],
    ["aud as an array of two", (k) => claims(k, { aud: [AUDIENCE, "other"] }), /aud/],
    ["an empty sub", (k) => claims(k, { sub: "" }), /sub/],
    ["iat 66 seconds old", (k) => claims(k, { iat: nowS() - 66 }), /older than 60 seconds/],
    ["iat 10 seconds in the future", (k) => claims(k, { iat: nowS() + 10 }), /future/],
    ["a missing iat", (k) => claims(k, { iat: undefined }), /iat/],
    ["exp in the past", (k) => claims(k, { exp: nowS() - 1 }), /expired/],
    ["another subject", (k) => claims(k, { sub: "someone-else" }), /sub does not match/],
    ["another audience", (k) => claims(k, { aud: "other-client" }), /aud does not match/],
    [
      "a supported but different issuer",
      (k) => claims(k, { iss: "https://appleid.apple.com" }),
      /iss does not match/,
    ],
    [
      "a nonce for another key",
      (k) => claims(k, { nonce: sha256Hex(k.toUpperCase()) }),
      /nonce does not match clientPublicKey/,
    ],
    ["no nonce", (k) => claims(k, { nonce: undefined }), /nonce/],
  ];
  it.each(refused)("refuses %s with 401 and a reason", async (_name, build, reason) => {
    const key = generateP256KeyPair().publicKeyUncompressedHex;
    const res = await verify(unsignedToken(build(key)), key);
    expect(res.response.status).toBe(401);
    expect(errorOf(res).code).toBe("UNAUTHORIZED");
    expect(errorOf(res).reason).toMatch(reason);
  });

  it.each([
    ["two segments", "abc.def"],
    ["a payload that is not JSON", `${base64urlEncode("{}")}.${base64urlEncode("nope")}.c2ln`],
    ["an empty signature segment", `${base64urlEncode("{}")}.${base64urlEncode("{}")}.`],
  ])("answers 400 INVALID_INPUT for a malformed JWT: %s", async (_name, token) => {
    const key = generateP256KeyPair().publicKeyUncompressedHex;
    const res = await verify(token, key);
    expect(res.response.status).toBe(400);
    expect(errorOf(res).code).toBe("INVALID_INPUT");
  });

  it("refuses the old literal sandbox-valid-oidc-token", async () => {
    const key = generateP256KeyPair().publicKeyUncompressedHex;
    const res = await verify("sandbox-valid-oidc-token", key);
    expect(res.response.status).toBe(401);
    expect(errorOf(res).reason).toMatch(/sandbox-valid-oidc-token is no longer accepted/);
  });

  it("refuses a stale token at registration", async () => {
    const wallet = await createWallet(sandbox);
    await otpLogin(sandbox, wallet.emailMethodId);
    const stale = unsignedToken({ ...claims("x", { iat: nowS() - 120 }), nonce: undefined });
    const res = await sandbox.client.POST("/auth/credentials", {
      body: { type: "OAUTH", accountId: wallet.accountId, oidcToken: stale },
    });
    expect(res.response.status).toBe(401);
    expect(errorOf(res).reason).toBe("Token iat is older than 60 seconds");
  });

  it("limits rapid reauthentication: the 11th verify within a minute is 429 with Retry-After", async () => {
    for (let i = 0; i < 10; i++) {
      const key = generateP256KeyPair().publicKeyUncompressedHex;
      expect((await verify(unsignedToken(claims(key)), key)).response.status).toBe(200);
      clock.advance(1000);
    }
    const key = generateP256KeyPair().publicKeyUncompressedHex;
    const limited = await verify(unsignedToken(claims(key)), key);
    expect(limited.response.status).toBe(429);
    expect(errorOf(limited).code).toBe("RATE_LIMITED");
    // The first attempt leaves the window 50 s from now.
    expect(limited.response.headers.get("Retry-After")).toBe("50");
    clock.advance(50_000);
    const again = generateP256KeyPair().publicKeyUncompressedHex;
    expect((await verify(unsignedToken(claims(again)), again)).response.status).toBe(200);
  });

  it("stops verifying a credential after 5 failures in 15 minutes", async () => {
    for (let i = 0; i < 5; i++) {
      const key = generateP256KeyPair().publicKeyUncompressedHex;
      const res = await verify(unsignedToken(claims(key, { sub: "intruder" })), key);
      expect(res.response.status).toBe(401);
      clock.advance(15_000);
    }
    const key = generateP256KeyPair().publicKeyUncompressedHex;
    // Even a valid token is refused until the first failure leaves the 15-minute window.
    const limited = await verify(unsignedToken(claims(key)), key);
    expect(limited.response.status).toBe(429);
    expect(Number(limited.response.headers.get("Retry-After"))).toBe(15 * 60 - 5 * 15);
    clock.advance(15 * 60_000);
    const fresh = generateP256KeyPair().publicKeyUncompressedHex;
    expect((await verify(unsignedToken(claims(fresh)), fresh)).response.status).toBe(200);
  });

  it("limits challenges to 5 a minute per credential", async () => {
    const wallet = await createWallet(sandbox);
    const challenge = () =>
      sandbox.client.POST("/auth/credentials/{id}/challenge", {
        params: { path: { id: wallet.emailMethodId } },
      });
    for (let i = 0; i < 5; i++) expect((await challenge()).response.status).toBe(200);
    const limited = await challenge();
    expect(limited.response.status).toBe(429);
    expect(Number(limited.response.headers.get("Retry-After"))).toBe(60);
    // An OAUTH credential needs no challenge at all.
    const oauth = await sandbox.client.POST("/auth/credentials/{id}/challenge", {
      params: { path: { id: methodId } },
    });
    expect(oauth.response.status).toBe(400);
  });
});

describe.each(databases)("OAuth in production mode (inline JWKS) on %s", (kind) => {
  const issuer = "https://idp.test.example";
  let sandbox: TestSandbox;
  let signingKey: CryptoKey;
  let methodId: string;

  async function signed(claims: Claims, key: CryptoKey = signingKey): Promise<string> {
    return new SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: "k1" }).sign(key);
  }

  function baseClaims(clientPublicKey?: string): Claims {
    const now = Math.floor(Date.now() / 1000);
    return {
      iss: issuer,
      aud: "client-1",
      sub: "user-1",
      email: "pat@example.com",
      iat: now,
      exp: now + 600,
      ...(clientPublicKey ? { nonce: sha256Hex(clientPublicKey) } : {}),
    };
  }

  beforeAll(async () => {
    const pair = await generateKeyPair("ES256");
    signingKey = pair.privateKey;
    const jwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "ES256", use: "sig" };
    sandbox = await startSandbox(kind, {
      env: { OIDC_JWKS: JSON.stringify({ [issuer]: { keys: [jwk] } }) },
    });
    const { method } = await registerOauth(sandbox, await signed(baseClaims()));
    methodId = method.id;
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  function verify(oidcToken: string, clientPublicKey: string) {
    return sandbox.client.POST("/auth/credentials/{id}/verify", {
      params: { path: { id: methodId } },
      body: { type: "OAUTH", oidcToken, clientPublicKey },
    });
  }

  it("accepts a token signed by the issuer's key", async () => {
    const key = generateP256KeyPair().publicKeyUncompressedHex;
    const res = await verify(await signed(baseClaims(key)), key);
    expect(res.response.status).toBe(200);
    expect((res.data as AuthSession).encryptedSessionSigningKey).toBeDefined();
  });

  it("refuses a dummy signature and a signature by another key", async () => {
    const key = generateP256KeyPair().publicKeyUncompressedHex;
    const dummy = unsignedToken(baseClaims(key));
    const other = (await generateKeyPair("ES256")).privateKey;
    for (const token of [dummy, await signed(baseClaims(key), other)]) {
      const res = await verify(token, key);
      expect(res.response.status).toBe(401);
      expect(errorOf(res).reason).toBe(
        "Token signature does not verify against the issuer's key set",
      );
    }
  });

  it("refuses an unsigned token at registration too", async () => {
    const wallet = await createWallet(sandbox);
    await otpLogin(sandbox, wallet.emailMethodId);
    const res = await sandbox.client.POST("/auth/credentials", {
      body: { type: "OAUTH", accountId: wallet.accountId, oidcToken: unsignedToken(baseClaims()) },
    });
    expect(res.response.status).toBe(401);
  });
});
