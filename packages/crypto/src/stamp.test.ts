import { createVerify } from "node:crypto";
import { p256 } from "@noble/curves/nist.js";
import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import { verifyStampSignature } from "@turnkey/crypto";
import { describe, expect, it } from "vitest";
import {
  StampError,
  base64urlDecode,
  base64urlEncode,
  bytesToHex,
  createStamp,
  generateP256KeyPair,
  hexToBytes,
  parseStamp,
  publicKeyToSpkiPem,
  verifyStamp,
} from "./index.js";

const SCHEME = "SIGNATURE_SCHEME_TK_API_P256";
const PAYLOAD = JSON.stringify({
  organizationId: "org_1",
  parameters: { publicKey: "02ab", verificationToken: "x.y.z" },
  timestampMs: "1700000000000",
  type: "ACTIVITY_TYPE_OTP_LOGIN",
});

function decodeStamp(header: string): Record<string, unknown> {
  return JSON.parse(new TextDecoder().decode(base64urlDecode(header))) as Record<string, unknown>;
}

function encodeStamp(obj: unknown): string {
  return base64urlEncode(JSON.stringify(obj));
}

function expectStampError(fn: () => unknown, kind: "MALFORMED" | "INVALID"): void {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(StampError);
  expect((caught as StampError).kind).toBe(kind);
}

/** Same (r, s) with s replaced by n - s: the other valid signature. */
function flipS(derHex: string): string {
  const sig = p256.Signature.fromBytes(hexToBytes(derHex), "der");
  return bytesToHex(new p256.Signature(sig.r, p256.Point.Fn.ORDER - sig.s).toBytes("der"));
}

describe("createStamp", () => {
  it("emits the documented header shape", () => {
    const kp = generateP256KeyPair();
    const header = createStamp(PAYLOAD, kp.privateKeyHex);
    expect(header).toMatch(/^[A-Za-z0-9_-]+$/); // base64url, no padding
    const stamp = decodeStamp(header);
    expect(Object.keys(stamp)).toEqual(["publicKey", "scheme", "signature"]);
    expect(stamp.publicKey).toBe(kp.publicKeyHex);
    expect(stamp.scheme).toBe(SCHEME);
    expect(stamp.signature).toMatch(/^30[0-9a-f]+$/);
  });

  it("signs SHA-256 of the UTF-8 payload (checked with OpenSSL)", () => {
    const kp = generateP256KeyPair();
    const payload = `${PAYLOAD} é ✓`;
    const { signature } = parseStamp(createStamp(payload, kp.privateKeyHex));
    const verifier = createVerify("SHA256");
    verifier.update(Buffer.from(payload, "utf8"));
    const pem = publicKeyToSpkiPem(kp.publicKeyHex);
    expect(verifier.verify(pem, Buffer.from(signature, "hex"))).toBe(true);
    const wrong = createVerify("SHA256");
    wrong.update(Buffer.from(payload + " ", "utf8"));
    expect(wrong.verify(pem, Buffer.from(signature, "hex"))).toBe(false);
  });
});

describe("verifyStamp", () => {
  it("accepts its own stamps and returns the compressed key", () => {
    const kp = generateP256KeyPair();
    expect(verifyStamp(createStamp(PAYLOAD, kp.privateKeyHex), PAYLOAD)).toEqual({
      publicKey: kp.publicKeyHex,
    });
  });

  it("rejects a different payload as INVALID", () => {
    const kp = generateP256KeyPair();
    const header = createStamp(PAYLOAD, kp.privateKeyHex);
    expectStampError(() => verifyStamp(header, PAYLOAD.replace("org_1", "org_2")), "INVALID");
    expectStampError(() => verifyStamp(header, PAYLOAD + " "), "INVALID");
  });

  it("rejects a signature made by another key as INVALID", () => {
    const kp = generateP256KeyPair();
    const other = generateP256KeyPair();
    const stamp = decodeStamp(createStamp(PAYLOAD, other.privateKeyHex));
    const forged = encodeStamp({ ...stamp, publicKey: kp.publicKeyHex });
    expectStampError(() => verifyStamp(forged, PAYLOAD), "INVALID");
  });

  it("accepts high-S signatures", () => {
    const kp = generateP256KeyPair();
    const stamp = decodeStamp(createStamp(PAYLOAD, kp.privateKeyHex));
    const sig = p256.Signature.fromBytes(hexToBytes(stamp.signature as string), "der");
    const highS = sig.hasHighS() ? (stamp.signature as string) : flipS(stamp.signature as string);
    expect(p256.Signature.fromBytes(hexToBytes(highS), "der").hasHighS()).toBe(true);
    const header = encodeStamp({ ...stamp, signature: highS });
    expect(verifyStamp(header, PAYLOAD).publicKey).toBe(kp.publicKeyHex);
    // And the low-S twin verifies too.
    const lowS = sig.hasHighS() ? flipS(stamp.signature as string) : (stamp.signature as string);
    expect(verifyStamp(encodeStamp({ ...stamp, signature: lowS }), PAYLOAD).publicKey).toBe(
      kp.publicKeyHex,
    );
  });

  it("accepts an uncompressed public key and returns it compressed", () => {
    const kp = generateP256KeyPair();
    const stamp = decodeStamp(createStamp(PAYLOAD, kp.privateKeyHex));
    const header = encodeStamp({ ...stamp, publicKey: kp.publicKeyUncompressedHex });
    expect(parseStamp(header).publicKey).toBe(kp.publicKeyUncompressedHex);
    expect(verifyStamp(header, PAYLOAD)).toEqual({ publicKey: kp.publicKeyHex });
  });

  it("accepts the fields in any order and with whitespace", () => {
    const kp = generateP256KeyPair();
    const { publicKey, scheme, signature } = decodeStamp(createStamp(PAYLOAD, kp.privateKeyHex));
    const reordered = [
      { signature, scheme, publicKey },
      { scheme, publicKey, signature },
    ];
    for (const obj of reordered) {
      expect(verifyStamp(encodeStamp(obj), PAYLOAD).publicKey).toBe(kp.publicKeyHex);
    }
    const spaced = base64urlEncode(JSON.stringify({ signature, publicKey, scheme }, null, 2));
    expect(verifyStamp(spaced, PAYLOAD).publicKey).toBe(kp.publicKeyHex);
  });

  describe("MALFORMED variants", () => {
    const kp = generateP256KeyPair();
    const good = decodeStamp(createStamp(PAYLOAD, kp.privateKeyHex));
    const cases: Array<[string, string]> = [
      ["empty header", ""],
      ["not base64url", "***"],
      ["standard base64 alphabet", Buffer.from(JSON.stringify(good)).toString("base64") + "+/"],
      ["invalid UTF-8", base64urlEncode(new Uint8Array([0xff, 0xfe, 0x7b]))],
      ["not JSON", base64urlEncode("publicKey=02ab")],
      ["JSON array", encodeStamp([good.publicKey, good.scheme, good.signature])],
      ["JSON null", encodeStamp(null)],
      ["JSON string", encodeStamp("stamp")],
      ["missing publicKey", encodeStamp({ scheme: good.scheme, signature: good.signature })],
      ["missing scheme", encodeStamp({ publicKey: good.publicKey, signature: good.signature })],
      ["missing signature", encodeStamp({ publicKey: good.publicKey, scheme: good.scheme })],
      ["publicKey not a string", encodeStamp({ ...good, publicKey: 42 })],
      ["signature not a string", encodeStamp({ ...good, signature: ["30"] })],
      ["scheme not a string", encodeStamp({ ...good, scheme: null })],
      ["wrong scheme", encodeStamp({ ...good, scheme: "SIGNATURE_SCHEME_TK_API_SECP256K1" })],
      ["publicKey not hex", encodeStamp({ ...good, publicKey: "zz" + "00".repeat(32) })],
      ["publicKey wrong length", encodeStamp({ ...good, publicKey: kp.publicKeyHex.slice(0, 64) })],
      [
        "publicKey not on the curve",
        encodeStamp({ ...good, publicKey: "04" + "00".repeat(31) + "01" + "00".repeat(31) + "01" }),
      ],
      ["signature not hex", encodeStamp({ ...good, signature: "not-hex" })],
      ["signature raw r||s, not DER", encodeStamp({ ...good, signature: "11".repeat(64) })],
      ["signature with trailing bytes", encodeStamp({ ...good, signature: `${good.signature}00` })],
      ["signature with r = 0", encodeStamp({ ...good, signature: "3006020100020101" })],
    ];
    it.each(cases)("%s", (_name, header) => {
      expectStampError(() => parseStamp(header), "MALFORMED");
      expectStampError(() => verifyStamp(header, PAYLOAD), "MALFORMED");
    });
  });
});

describe("interop with @turnkey/api-key-stamper", () => {
  it.each(["node", "purejs"] as const)(
    "verifies stamps from ApiKeyStamper (%s runtime)",
    async (runtimeOverride) => {
      const kp = generateP256KeyPair();
      const stamper = new ApiKeyStamper({
        apiPublicKey: kp.publicKeyHex,
        apiPrivateKey: kp.privateKeyHex,
        runtimeOverride,
      });
      const { stampHeaderName, stampHeaderValue } = await stamper.stamp(PAYLOAD);
      expect(stampHeaderName).toBe("X-Stamp");
      const parsed = parseStamp(stampHeaderValue);
      expect(parsed.publicKey).toBe(kp.publicKeyHex);
      expect(parsed.scheme).toBe(SCHEME);
      expect(verifyStamp(stampHeaderValue, PAYLOAD)).toEqual({ publicKey: kp.publicKeyHex });
      expectStampError(() => verifyStamp(stampHeaderValue, `${PAYLOAD}x`), "INVALID");
    },
  );

  it("verifies a high-S stamp made by the node runtime (OpenSSL does not normalise S)", async () => {
    const kp = generateP256KeyPair();
    const stamper = new ApiKeyStamper({
      apiPublicKey: kp.publicKeyHex,
      apiPrivateKey: kp.privateKeyHex,
      runtimeOverride: "node",
    });
    // About half of OpenSSL's signatures are high-S; 64 tries make a miss negligible.
    let found = false;
    for (let i = 0; i < 64 && !found; i++) {
      const payload = `${PAYLOAD}#${i}`;
      const { stampHeaderValue } = await stamper.stamp(payload);
      const { signature } = parseStamp(stampHeaderValue);
      if (p256.Signature.fromBytes(hexToBytes(signature), "der").hasHighS()) {
        found = true;
        expect(verifyStamp(stampHeaderValue, payload).publicKey).toBe(kp.publicKeyHex);
      }
    }
    expect(found).toBe(true);
  });

  it("createStamp is byte-identical to the pure-JS stamper (deterministic RFC 6979)", async () => {
    const kp = generateP256KeyPair();
    const stamper = new ApiKeyStamper({
      apiPublicKey: kp.publicKeyHex,
      apiPrivateKey: kp.privateKeyHex,
      runtimeOverride: "purejs",
    });
    for (const payload of [PAYLOAD, "", "héllo ✓", `${PAYLOAD}${PAYLOAD}`]) {
      const theirs = (await stamper.stamp(payload)).stampHeaderValue;
      expect(createStamp(payload, kp.privateKeyHex)).toBe(theirs);
    }
  });

  it("createStamp has the same structure as the node-runtime stamper", async () => {
    const kp = generateP256KeyPair();
    const stamper = new ApiKeyStamper({
      apiPublicKey: kp.publicKeyHex,
      apiPrivateKey: kp.privateKeyHex,
      runtimeOverride: "node",
    });
    const theirs = decodeStamp((await stamper.stamp(PAYLOAD)).stampHeaderValue);
    const ours = decodeStamp(createStamp(PAYLOAD, kp.privateKeyHex));
    expect(Object.keys(ours)).toEqual(Object.keys(theirs));
    expect(ours.publicKey).toBe(theirs.publicKey);
    expect(ours.scheme).toBe(theirs.scheme);
    expect(typeof ours.signature).toBe(typeof theirs.signature);
  });

  it("our stamps pass @turnkey/crypto verifyStampSignature", async () => {
    const kp = generateP256KeyPair();
    const { publicKey, signature } = parseStamp(createStamp(PAYLOAD, kp.privateKeyHex));
    await expect(verifyStampSignature(publicKey, signature, PAYLOAD)).resolves.toBe(true);
    await expect(verifyStampSignature(publicKey, signature, `${PAYLOAD} `)).resolves.toBe(false);
  });
});
