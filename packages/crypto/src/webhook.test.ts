import {
  createPrivateKey,
  createPublicKey,
  createVerify,
  sign as nodeSign,
  verify as nodeVerify,
} from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  CryptoError,
  base64urlEncode,
  generateP256KeyPair,
  hexToBytes,
  publicKeyToSpkiPem,
  signWebhookBody,
  spkiPemToPublicKeyHex,
  verifyWebhookSignature,
} from "./index.js";
import type { P256KeyPair } from "./index.js";

const BODY = JSON.stringify({
  id: "Webhook:0e4a3c9e-8a55-4b8e-9d0c-6f2d3c1b2a10",
  type: "CARD.STATE_CHANGE",
  timestamp: "2025-01-01T00:00:00.000Z",
  data: { id: "Card:1", state: "ACTIVE", note: "héllo" },
});

function nodePrivateKey(kp: P256KeyPair) {
  const point = hexToBytes(kp.publicKeyUncompressedHex);
  return createPrivateKey({
    key: {
      kty: "EC",
      crv: "P-256",
      x: base64urlEncode(point.subarray(1, 33)),
      y: base64urlEncode(point.subarray(33)),
      d: base64urlEncode(hexToBytes(kp.privateKeyHex)),
    },
    format: "jwk",
  });
}

describe("publicKeyToSpkiPem", () => {
  it("is byte-identical to node's SPKI PEM export", () => {
    const kp = generateP256KeyPair();
    const ours = publicKeyToSpkiPem(kp.publicKeyHex);
    const nodePem = createPublicKey(nodePrivateKey(kp)).export({ type: "spki", format: "pem" });
    expect(ours).toBe(nodePem);
    expect(publicKeyToSpkiPem(kp.publicKeyUncompressedHex)).toBe(ours);
  });

  it("round-trips through node's createPublicKey", () => {
    const kp = generateP256KeyPair();
    const key = createPublicKey(publicKeyToSpkiPem(kp.publicKeyHex));
    expect(key.asymmetricKeyType).toBe("ec");
    expect(key.asymmetricKeyDetails?.namedCurve).toBe("prime256v1");
    const der = key.export({ type: "spki", format: "der" });
    // Fixed 26-byte prefix followed by the uncompressed point.
    expect(der.subarray(26).toString("hex")).toBe(kp.publicKeyUncompressedHex);
    expect(spkiPemToPublicKeyHex(publicKeyToSpkiPem(kp.publicKeyUncompressedHex))).toBe(
      kp.publicKeyHex,
    );
  });

  it("spkiPemToPublicKeyHex also reads a compressed-point SPKI that node accepts", () => {
    const kp = generateP256KeyPair();
    const der = Buffer.concat([
      Buffer.from("3039301306072a8648ce3d020106082a8648ce3d030107032200", "hex"),
      Buffer.from(kp.publicKeyHex, "hex"),
    ]);
    const pem = `-----BEGIN PUBLIC KEY-----\n${der.toString("base64")}\n-----END PUBLIC KEY-----\n`;
    const viaNode = createPublicKey(pem).export({ format: "jwk" });
    expect(createPublicKey(publicKeyToSpkiPem(kp.publicKeyHex)).export({ format: "jwk" })).toEqual(
      viaNode,
    );
    expect(spkiPemToPublicKeyHex(pem)).toBe(kp.publicKeyHex);
  });

  it("rejects invalid keys and non-P-256 PEMs", () => {
    const offCurve = "04" + "00".repeat(31) + "01" + "00".repeat(31) + "01";
    expect(() => publicKeyToSpkiPem(offCurve)).toThrow(CryptoError);
    expect(() => publicKeyToSpkiPem("02" + "ff".repeat(32))).toThrow(CryptoError); // x >= p
    const ed = createPublicKey(
      "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n",
    );
    expect(() =>
      spkiPemToPublicKeyHex(ed.export({ type: "spki", format: "pem" }).toString()),
    ).toThrow(CryptoError);
  });
});

describe("webhook signatures", () => {
  const kp = generateP256KeyPair();
  const pem = publicKeyToSpkiPem(kp.publicKeyHex);

  it("produces {v:'1', s:<base64 DER>} that OpenSSL verifies over the raw body", () => {
    const header = signWebhookBody(BODY, kp.privateKeyHex);
    const parsed = JSON.parse(header) as { v: string; s: string };
    expect(Object.keys(parsed)).toEqual(["v", "s"]);
    expect(parsed.v).toBe("1");
    expect(parsed.s).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    const der = Buffer.from(parsed.s, "base64");
    expect(der[0]).toBe(0x30);

    expect(nodeVerify("sha256", Buffer.from(BODY, "utf8"), pem, der)).toBe(true);
    const verifier = createVerify("SHA256");
    verifier.update(BODY);
    expect(verifier.verify(pem, der)).toBe(true);
    expect(nodeVerify("sha256", Buffer.from(`${BODY} `, "utf8"), pem, der)).toBe(false);
  });

  it("verifies its own signatures and signatures made by node:crypto", () => {
    expect(verifyWebhookSignature(BODY, signWebhookBody(BODY, kp.privateKeyHex), pem)).toBe(true);
    const der = nodeSign("sha256", Buffer.from(BODY, "utf8"), nodePrivateKey(kp));
    const header = JSON.stringify({ v: "1", s: der.toString("base64") });
    expect(verifyWebhookSignature(BODY, header, pem)).toBe(true);
    expect(verifyWebhookSignature(new TextEncoder().encode(BODY), header, pem)).toBe(true);
  });

  it("signs raw bytes exactly (not re-encoded)", () => {
    const bytes = new Uint8Array([0xff, 0x00, 0x80, 0x7b]);
    const header = signWebhookBody(bytes, kp.privateKeyHex);
    const der = Buffer.from((JSON.parse(header) as { s: string }).s, "base64");
    expect(nodeVerify("sha256", bytes, pem, der)).toBe(true);
    expect(verifyWebhookSignature(bytes, header, pem)).toBe(true);
  });

  it("returns false for a changed body, another key or a malformed header", () => {
    const header = signWebhookBody(BODY, kp.privateKeyHex);
    const s = (JSON.parse(header) as { s: string }).s;
    const otherPem = publicKeyToSpkiPem(generateP256KeyPair().publicKeyHex);
    expect(verifyWebhookSignature(BODY.replace("ACTIVE", "FROZEN"), header, pem)).toBe(false);
    expect(verifyWebhookSignature(BODY, header, otherPem)).toBe(false);
    expect(verifyWebhookSignature(BODY, "not json", pem)).toBe(false);
    expect(verifyWebhookSignature(BODY, JSON.stringify({ v: "2", s }), pem)).toBe(false);
    expect(verifyWebhookSignature(BODY, JSON.stringify({ v: 1, s }), pem)).toBe(false);
    expect(verifyWebhookSignature(BODY, JSON.stringify({ v: "1", s: "@@@" }), pem)).toBe(false);
    expect(verifyWebhookSignature(BODY, JSON.stringify({ v: "1" }), pem)).toBe(false);
    expect(verifyWebhookSignature(BODY, header, "not a pem")).toBe(false);
  });
});
