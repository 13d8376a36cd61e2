import {
  createOtpTargetBundle,
  generateP256KeyPair,
  openOtpBundle,
  verifyStamp,
} from "@payments-sandbox/crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWalletKeys } from "./wallet-keys.js";

// The key holder as the workflows use it: over HTTP, checked with the
// library the sandbox opens bundles and verifies stamps with.
describe("wallet key holder", () => {
  const enclave = generateP256KeyPair();
  let holder: Awaited<ReturnType<typeof startWalletKeys>>;
  beforeAll(async () => {
    holder = await startWalletKeys({ enclavePublicKey: enclave.publicKeyUncompressedHex });
  });
  afterAll(async () => {
    await holder?.stop();
  });

  async function call(method: string, path: string, body?: object) {
    const res = await fetch(`${holder.url}${path}`, {
      method,
      headers: { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return {
      status: res.status,
      body: (text ? JSON.parse(text) : undefined) as Record<string, string>,
    };
  }

  async function newKey(): Promise<string> {
    const created = await call("POST", "/keys");
    expect(created.status).toBe(201);
    expect(created.body.publicKey).toMatch(/^0[23][0-9a-f]{64}$/);
    return created.body.publicKey!;
  }

  function targetBundle(signingPrivateKeyHex: string) {
    const target = generateP256KeyPair();
    const bundle = createOtpTargetBundle({
      targetPublicKeyHex: target.publicKeyHex,
      organizationId: "Platform:0190a7e4-0000-7000-8000-000000000001",
      userId: "InternalAccount:0190a7e4-0000-7000-8000-000000000002",
      signingPrivateKeyHex,
    });
    return { target, bundle };
  }

  it("seals the code and its public key to the bundle's target key", async () => {
    const tek = await newKey();
    const { target, bundle } = targetBundle(enclave.privateKeyHex);
    const sealed = await call("POST", `/keys/${tek}/otp-bundle`, {
      otpEncryptionTargetBundle: bundle,
      otpCode: "000000",
    });
    expect(sealed.status).toBe(200);
    const opened = await openOtpBundle(sealed.body.encryptedOtpBundle!, target.privateKeyHex);
    expect(opened).toEqual({ otpCode: "000000", publicKey: tek });
  });

  it("refuses a bundle signed by another enclave key", async () => {
    const tek = await newKey();
    const { bundle } = targetBundle(generateP256KeyPair().privateKeyHex);
    const sealed = await call("POST", `/keys/${tek}/otp-bundle`, {
      otpEncryptionTargetBundle: bundle,
      otpCode: "000000",
    });
    expect(sealed.status).toBe(400);
    expect(sealed.body.message).toContain("unexpected key");
  });

  it("stamps a payload with the held key, and forgets it on request", async () => {
    const key = await newKey();
    const payloadToSign =
      '{"organizationId":"Platform:x","parameters":{},"timestampMs":"1","type":"T"}';
    const stamped = await call("POST", `/keys/${key}/stamp`, { payloadToSign });
    expect(stamped.status).toBe(200);
    expect(verifyStamp(stamped.body.stamp!, payloadToSign).publicKey).toBe(key);

    expect((await call("DELETE", `/keys/${key}`)).status).toBe(204);
    const after = await call("POST", `/keys/${key}/stamp`, { payloadToSign });
    expect(after.status).toBe(404);
  });

  it("answers 400 to a body without the required fields", async () => {
    const key = await newKey();
    const res = await call("POST", `/keys/${key}/stamp`, {});
    expect(res.status).toBe(400);
    expect(res.body.message).toContain("payloadToSign");
  });
});
