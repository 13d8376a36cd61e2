import { verify } from "node:crypto";
import {
  generateP256KeyPair,
  publicKeyToSpkiPem,
  signWebhookBody,
  verifyWebhookSignature,
} from "@payments-sandbox/crypto";
import { describe, expect, it } from "vitest";
import { webhookSignature } from "./webhook-signer.js";

// The dispatcher's node:crypto signer must produce what receivers verify with
// the platform's published key, exactly like the portable signer.

const BODY = JSON.stringify({
  id: "Webhook:6f1f9d4c-8a47-4b1e-9c36-0a0f3f1f4a11",
  type: "CARD_TRANSACTION.AUTHORIZED",
  timestamp: "2026-11-22T10:00:00.000Z",
  data: { merchant: { descriptor: "CAFÉ ☕" } },
});

describe("webhookSignature", () => {
  const keys = generateP256KeyPair();
  const pem = publicKeyToSpkiPem(keys.publicKeyHex);

  it("has the portable signer's header shape", () => {
    const header = JSON.parse(webhookSignature(BODY, keys.privateKeyHex)) as Record<
      string,
      unknown
    >;
    const portable = JSON.parse(signWebhookBody(BODY, keys.privateKeyHex)) as Record<
      string,
      unknown
    >;
    expect(Object.keys(header)).toEqual(Object.keys(portable));
    expect(header.v).toBe(portable.v);
    expect(header.s).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
  });

  it("verifies with the published key, in @payments-sandbox/crypto and in OpenSSL", () => {
    const header = webhookSignature(BODY, keys.privateKeyHex);
    expect(verifyWebhookSignature(BODY, header, pem)).toBe(true);
    const der = Buffer.from((JSON.parse(header) as { s: string }).s, "base64");
    expect(verify("sha256", Buffer.from(BODY, "utf8"), pem, der)).toBe(true);
  });

  it("does not verify for another body or another platform's key", () => {
    const header = webhookSignature(BODY, keys.privateKeyHex);
    expect(verifyWebhookSignature(`${BODY} `, header, pem)).toBe(false);
    const other = publicKeyToSpkiPem(generateP256KeyPair().publicKeyHex);
    expect(verifyWebhookSignature(BODY, header, other)).toBe(false);
  });

  it("refuses a key that is not a 32-byte scalar", () => {
    expect(() => webhookSignature(BODY, "abcd")).toThrow(/32-byte/);
  });
});
