import { generateP256KeyPair, publicKeyToSpkiPem, signWebhookBody } from "@payments-sandbox/crypto";
import { describe, expect, it } from "vitest";
import { verifyWebhook, webhookSignatureOf } from "./index.js";

const body = JSON.stringify({
  id: "Webhook:524f1c89-2d12-40d3-9b3e-403e940a163e",
  type: "TEST.PING",
  timestamp: "2025-10-13T09:30:02.000Z",
  data: { message: "hello" },
});

describe("verifyWebhook", () => {
  const keys = generateP256KeyPair();
  const pem = publicKeyToSpkiPem(keys.publicKeyHex);
  const header = signWebhookBody(body, keys.privateKeyHex);

  it("accepts the raw body as string or bytes", () => {
    expect(verifyWebhook(body, header, pem)).toBe(true);
    expect(verifyWebhook(new TextEncoder().encode(body), header, pem)).toBe(true);
  });

  it("rejects a changed body, another key, and a missing or malformed header", () => {
    expect(verifyWebhook(body.replace("hello", "hellp"), header, pem)).toBe(false);
    expect(
      verifyWebhook(body, header, publicKeyToSpkiPem(generateP256KeyPair().publicKeyHex)),
    ).toBe(false);
    expect(verifyWebhook(body, undefined, pem)).toBe(false);
    expect(verifyWebhook(body, null, pem)).toBe(false);
    expect(verifyWebhook(body, "not json", pem)).toBe(false);
    expect(verifyWebhook(body, header, "not a pem")).toBe(false);
  });

  it("reads X-Grid-Signature from the headers, in any case, before the old name", () => {
    const fetchHeaders = new Headers({ "X-Grid-Signature": header });
    expect(verifyWebhook(body, fetchHeaders, pem)).toBe(true);
    expect(verifyWebhook(body, { "x-grid-signature": header }, pem)).toBe(true);
    // Node gives repeated headers as an array: the first counts.
    expect(verifyWebhook(body, { "x-grid-signature": [header, "forged"] }, pem)).toBe(true);
    // Production's name wins over the deprecated one.
    const both = { "x-grid-signature": header, "x-service-signature": "forged" };
    expect(webhookSignatureOf(both)).toBe(header);
    expect(verifyWebhook(body, both, pem)).toBe(true);
    const forged = { "x-grid-signature": "forged", "x-service-signature": header };
    expect(verifyWebhook(body, forged, pem)).toBe(false);
  });

  it("falls back to X-Service-Signature when X-Grid-Signature is absent", () => {
    expect(webhookSignatureOf({ "X-Service-Signature": header })).toBe(header);
    expect(verifyWebhook(body, new Headers({ "X-Service-Signature": header }), pem)).toBe(true);
    expect(webhookSignatureOf({ "content-type": "application/json" })).toBeUndefined();
    expect(verifyWebhook(body, {}, pem)).toBe(false);
  });
});
