// A small software WebAuthn authenticator (ES256, "none" attestation), enough
// to produce the registration and assertion a browser would hand over.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";

// --- Minimal CBOR encoder (the subset attestation objects and COSE keys use) ---

type Cbor = number | string | Uint8Array | Map<number | string, Cbor>;

function head(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length]);
  if (length < 0x10000) {
    const b = Buffer.alloc(3);
    b[0] = (major << 5) | 25;
    b.writeUInt16BE(length, 1);
    return b;
  }
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(length, 1);
  return b;
}

export function cbor(value: Cbor): Buffer {
  if (typeof value === "number") {
    return value >= 0 ? head(0, value) : head(1, -1 - value);
  }
  if (typeof value === "string") {
    const bytes = Buffer.from(value, "utf8");
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  const parts = [head(5, value.size)];
  for (const [k, v] of value) parts.push(cbor(k), cbor(v));
  return Buffer.concat(parts);
}

// --- Authenticator ---

const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();
const b64url = (data: Uint8Array | string) => Buffer.from(data).toString("base64url");

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

export interface Attestation {
  credentialId: string;
  clientDataJson: string;
  attestationObject: string;
  transports: ("ble" | "hybrid" | "internal" | "nfc" | "usb")[];
}

export interface Assertion {
  credentialId: string;
  clientDataJson: string;
  authenticatorData: string;
  signature: string;
  userHandle?: string;
}

export interface CeremonyOptions {
  rpId?: string;
  origin?: string;
}

export class SoftwareAuthenticator {
  readonly credentialId = b64url(randomBytes(32));
  /** The last signature counter this authenticator reported. */
  counter = 0;
  private readonly privateKey: KeyObject;
  private readonly x: Buffer;
  private readonly y: Buffer;

  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const jwk = publicKey.export({ format: "jwk" });
    this.privateKey = privateKey;
    this.x = Buffer.from(jwk.x!, "base64url");
    this.y = Buffer.from(jwk.y!, "base64url");
  }

  private authData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([
      sha256(rpId),
      Buffer.from([flags]),
      count,
      ...(attested ? [attested] : []),
    ]);
  }

  /** navigator.credentials.create over `challenge` (base64url). */
  create(challenge: string, options: CeremonyOptions = {}): Attestation {
    const rpId = options.rpId ?? "localhost";
    const origin = options.origin ?? "http://localhost:3000";
    const coseKey = cbor(
      new Map<number, Cbor>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, this.x],
        [-3, this.y],
      ]),
    );
    const rawId = Buffer.from(this.credentialId, "base64url");
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(rawId.length);
    const attested = Buffer.concat([Buffer.alloc(16), idLength, rawId, coseKey]);
    this.counter = 1;
    const authData = this.authData(rpId, FLAG_UP | FLAG_UV | FLAG_AT, this.counter, attested);
    const clientData = JSON.stringify({
      type: "webauthn.create",
      challenge,
      origin,
      crossOrigin: false,
    });
    const attestationObject = cbor(
      new Map<string, Cbor>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authData],
      ]),
    );
    return {
      credentialId: this.credentialId,
      clientDataJson: b64url(clientData),
      attestationObject: b64url(attestationObject),
      transports: ["internal", "hybrid"],
    };
  }

  /**
   * navigator.credentials.get over the sandbox's hex challenge (the browser
   * is given the UTF-8 bytes of the hex string). Options break one thing at a
   * time for negative tests.
   */
  get(
    challengeHex: string,
    options: CeremonyOptions & {
      userPresent?: boolean;
      counter?: number;
      signOver?: Buffer;
    } = {},
  ): Assertion {
    const rpId = options.rpId ?? "localhost";
    const origin = options.origin ?? "http://localhost:3000";
    const counter = options.counter ?? this.counter + 1;
    this.counter = Math.max(this.counter, counter);
    const flags = options.userPresent === false ? 0 : FLAG_UP | FLAG_UV;
    const authData = this.authData(rpId, flags, counter);
    const clientData = JSON.stringify({
      type: "webauthn.get",
      challenge: b64url(challengeHex),
      origin,
      crossOrigin: false,
    });
    const signed = options.signOver ?? Buffer.concat([authData, sha256(clientData)]);
    return {
      credentialId: this.credentialId,
      clientDataJson: b64url(clientData),
      authenticatorData: b64url(authData),
      signature: b64url(sign("sha256", signed, this.privateKey)),
    };
  }
}
