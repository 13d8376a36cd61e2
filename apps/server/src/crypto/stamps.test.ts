import { ApiKeyStamper } from "@turnkey/api-key-stamper";
import * as portable from "@payments-sandbox/crypto";
import { StampError } from "@payments-sandbox/crypto";
import { describe, expect, it } from "vitest";
import { readStamp, verifyStamp } from "./stamps.js";

// Stamps made by clients (the portable library and the reference
// @turnkey/api-key-stamper) must verify on the server, and every bad header
// must fail with the portable verifier's kind of error: the API answers
// WALLET_SIGNATURE_MALFORMED for MALFORMED and WALLET_SIGNATURE_INVALID for
// INVALID.

const SCHEME = "SIGNATURE_SCHEME_TK_API_P256";
const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const PAYLOAD = JSON.stringify({
  organizationId: "Platform:1",
  parameters: { publicKey: "02ab", verificationToken: "x.y.z" },
  timestampMs: "1763800000000",
  type: "ACTIVITY_TYPE_OTP_LOGIN",
  note: "CAFÉ ☕",
});

const encode = (stamp: unknown) => Buffer.from(JSON.stringify(stamp)).toString("base64url");
const decode = (header: string) =>
  JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as {
    publicKey: string;
    scheme: string;
    signature: string;
  };

function derInteger(value: bigint): string {
  let hex = value.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  if (parseInt(hex.slice(0, 2), 16) & 0x80) hex = `00${hex}`;
  return `02${(hex.length / 2).toString(16).padStart(2, "0")}${hex}`;
}

function der(r: bigint, s: bigint): string {
  const body = derInteger(r) + derInteger(s);
  return `30${(body.length / 2).toString(16).padStart(2, "0")}${body}`;
}

/** r and s of a DER signature with short lengths (all P-256 signatures). */
function rs(signatureHex: string): { r: bigint; s: bigint } {
  const bytes = Buffer.from(signatureHex, "hex");
  const rLength = bytes[3] as number;
  const r = bytes.subarray(4, 4 + rLength);
  const s = bytes.subarray(6 + rLength, 6 + rLength + (bytes[5 + rLength] as number));
  return { r: BigInt(`0x${r.toString("hex")}`), s: BigInt(`0x${s.toString("hex")}`) };
}

function kindOf(fn: () => unknown): string {
  try {
    fn();
    return "OK";
  } catch (err) {
    return err instanceof StampError ? err.kind : `other: ${String(err)}`;
  }
}

describe("stamps verified with node:crypto", () => {
  const key = portable.generateP256KeyPair();
  const header = portable.createStamp(PAYLOAD, key.privateKeyHex);

  it("verifies the portable stamper's stamps and returns the same compressed key", () => {
    expect(verifyStamp(header, PAYLOAD)).toEqual(portable.verifyStamp(header, PAYLOAD));
    expect(verifyStamp(readStamp(header), PAYLOAD)).toEqual({ publicKey: key.publicKeyHex });
  });

  it("checks every stamp of a key it has seen (as a session's) against its own payload", () => {
    const first = portable.createStamp(PAYLOAD, key.privateKeyHex);
    expect(verifyStamp(first, PAYLOAD)).toEqual({ publicKey: key.publicKeyHex });
    const next = `${PAYLOAD} `;
    expect(verifyStamp(portable.createStamp(next, key.privateKeyHex), next)).toEqual({
      publicKey: key.publicKeyHex,
    });
    expect(kindOf(() => verifyStamp(first, next))).toBe("INVALID");
    // Another key's signature under this key's name.
    const other = portable.generateP256KeyPair();
    const forged = encode({
      ...decode(first),
      signature: decode(portable.createStamp(PAYLOAD, other.privateKeyHex)).signature,
    });
    expect(kindOf(() => verifyStamp(forged, PAYLOAD))).toBe("INVALID");
  });

  it("verifies the reference client's stamps (@turnkey/api-key-stamper)", async () => {
    const stamper = new ApiKeyStamper({
      apiPublicKey: key.publicKeyHex,
      apiPrivateKey: key.privateKeyHex,
    });
    const { stampHeaderValue } = await stamper.stamp(PAYLOAD);
    expect(verifyStamp(stampHeaderValue, PAYLOAD)).toEqual({ publicKey: key.publicKeyHex });
  });

  it("accepts high and low S, and the signer's key in either form", () => {
    const { r, s } = rs(decode(header).signature);
    const high = s > N / 2n ? s : N - s;
    for (const signature of [der(r, high), der(r, N - high)]) {
      const forms = [
        key.publicKeyHex,
        key.publicKeyUncompressedHex,
        key.publicKeyHex.toUpperCase(),
      ];
      for (const publicKey of forms) {
        const variant = encode({ publicKey, scheme: SCHEME, signature });
        expect(verifyStamp(variant, PAYLOAD)).toEqual({ publicKey: key.publicKeyHex });
        expect(portable.verifyStamp(variant, PAYLOAD)).toEqual({ publicKey: key.publicKeyHex });
      }
    }
  });

  it("reads the members in any order", () => {
    const { publicKey, signature } = decode(header);
    const reordered = encode({ signature, scheme: SCHEME, publicKey });
    expect(verifyStamp(reordered, PAYLOAD)).toEqual({ publicKey: key.publicKeyHex });
  });

  /** The uncompressed key with the lowest bit of y flipped. */
  const offCurve = (uncompressed: string) => {
    const last = parseInt(uncompressed.slice(-2), 16) ^ 1;
    return `${uncompressed.slice(0, -2)}${last.toString(16).padStart(2, "0")}`;
  };

  it("fails every bad header with the portable verifier's kind of error", () => {
    const other = portable.generateP256KeyPair();
    const { publicKey, signature } = decode(header);
    const { r, s } = rs(signature);
    const with_ = (fields: Record<string, unknown>) =>
      encode({ publicKey, scheme: SCHEME, signature, ...fields });
    const cases: [string, string, string][] = [
      ["empty", "", "MALFORMED"],
      ["not base64url", "not base64url!", "MALFORMED"],
      ["not JSON", Buffer.from("{oops").toString("base64url"), "MALFORMED"],
      ["a JSON array", encode([publicKey, SCHEME, signature]), "MALFORMED"],
      ["no public key", encode({ scheme: SCHEME, signature }), "MALFORMED"],
      ["another scheme", with_({ scheme: "SIGNATURE_SCHEME_TK_API_SECP256K1" }), "MALFORMED"],
      ["a short key", with_({ publicKey: publicKey.slice(0, 64) }), "MALFORMED"],
      [
        "a key off the curve",
        // y with its lowest bit flipped: no other y squares to the same value
        // (a fixed last byte left the key on the curve when it already was that byte).
        with_({ publicKey: offCurve(key.publicKeyUncompressedHex) }),
        "MALFORMED",
      ],
      ["an x with no point", with_({ publicKey: `02${"00".repeat(31)}01` }), "MALFORMED"],
      [
        "the hybrid key form",
        with_({ publicKey: `06${key.publicKeyUncompressedHex.slice(2)}` }),
        "MALFORMED",
      ],
      ["a signature not hex", with_({ signature: "30zz" }), "MALFORMED"],
      ["a trailing byte", with_({ signature: `${signature}00` }), "MALFORMED"],
      ["r = 0", with_({ signature: der(0n, s) }), "MALFORMED"],
      ["s = n", with_({ signature: der(r, N) }), "MALFORMED"],
      ["raw r‖s instead of DER", with_({ signature: "11".repeat(64) }), "MALFORMED"],
      ["another key's name on it", with_({ publicKey: other.publicKeyHex }), "INVALID"],
      // Valid: the signer check after it (is this the bound key?) refuses it.
      ["another key's own stamp", portable.createStamp(PAYLOAD, other.privateKeyHex), "OK"],
      [
        "a signature of another payload",
        portable.createStamp(`${PAYLOAD} `, key.privateKeyHex),
        "INVALID",
      ],
    ];
    for (const [what, bad, expected] of cases) {
      const server = kindOf(() => verifyStamp(bad, PAYLOAD));
      expect([what, server]).toEqual([what, expected]);
      expect([what, server]).toEqual([what, kindOf(() => portable.verifyStamp(bad, PAYLOAD))]);
      if (expected === "MALFORMED") {
        expect([what, kindOf(() => readStamp(bad))]).toEqual([what, "MALFORMED"]);
      }
      // The retry decodes the header first (decodeStamp, structure only) and
      // verifies the decoded stamp: the same verdict either way.
      let decoded: portable.ParsedStamp | undefined;
      try {
        decoded = portable.decodeStamp(bad);
      } catch {
        decoded = undefined;
      }
      if (decoded !== undefined) {
        expect([what, kindOf(() => verifyStamp(decoded, PAYLOAD))]).toEqual([what, expected]);
      }
    }
  });

  it("does not verify a stamp over another payload", () => {
    expect(kindOf(() => verifyStamp(header, `${PAYLOAD} `))).toBe("INVALID");
  });
});
