/**
 * WebAuthn for SCA passkey factors. The live contract relays the browser's
 * registration and authentication responses as opaque JSON objects; the
 * sandbox verifies them for real against the challenge it issued, its
 * relying party and the `origin` the caller names (one of the configured
 * passkey origins).
 */
import { randomBytes } from "node:crypto";
import { base64urlDecode, base64urlEncode } from "@payments-sandbox/crypto";
import {
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  type RegistrationResponseJSON,
} from "@simplewebauthn/server";
import type { AuthConfig } from "../../config.js";
import { fieldError, invalidInput } from "../../errors.js";

export interface ScaPasskey {
  credentialId: string;
  /** COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
}

const TRANSPORTS: readonly string[] = [
  "ble",
  "cable",
  "hybrid",
  "internal",
  "nfc",
  "smart-card",
  "usb",
];
const isTransport = (value: unknown): value is AuthenticatorTransportFuture =>
  typeof value === "string" && TRANSPORTS.includes(value);

const text = (value: unknown): string | undefined =>
  typeof value === "string" ? value : undefined;
const record = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

const refused = (field: string, reason: string) =>
  invalidInput(`The passkey ${field} could not be verified: ${reason}`, {
    errors: [fieldError(`body.${field}`, reason)],
  });

const reasonOf = (err: unknown) => (err instanceof Error ? err.message : "verification failed");

export class ScaPasskeys {
  constructor(private readonly config: AuthConfig) {}

  get relyingPartyId(): string {
    return this.config.passkeyRpId;
  }

  get allowedOrigins(): string[] {
    return this.config.passkeyOrigins;
  }

  /**
   * A fresh WebAuthn challenge: base64url of the UTF-8 bytes of 64 random hex
   * digits, the form the embedded wallet's passkeys use too.
   */
  challenge(): string {
    return base64urlEncode(randomBytes(32).toString("hex"));
  }

  /** The origin a ceremony names must be one the sandbox's relying party allows. */
  checkOrigin(origin: string | null | undefined): string {
    if (!origin || !this.config.passkeyOrigins.includes(origin)) {
      throw invalidInput(`origin must be one of ${this.config.passkeyOrigins.join(", ")}`, {
        errors: [fieldError("body.origin", "not an allowed origin")],
      });
    }
    return origin;
  }

  /** Verifies a registration response made over `challenge` on `origin`. */
  async register(
    challenge: string,
    origin: string,
    credential: Record<string, unknown>,
  ): Promise<ScaPasskey> {
    const response = record(credential.response);
    const id = text(credential.id);
    const clientDataJSON = text(response.clientDataJSON);
    const attestationObject = text(response.attestationObject);
    if (!id || !clientDataJSON || !attestationObject) {
      throw refused(
        "credential",
        "id, response.clientDataJSON and response.attestationObject are required",
      );
    }
    const transports = Array.isArray(response.transports)
      ? response.transports.filter(isTransport)
      : [];
    const json: RegistrationResponseJSON = {
      id,
      rawId: text(credential.rawId) ?? id,
      type: "public-key",
      response: { clientDataJSON, attestationObject, transports },
      clientExtensionResults: {},
    };
    let result;
    try {
      result = await verifyRegistrationResponse({
        response: json,
        expectedChallenge: challenge,
        expectedOrigin: origin,
        expectedRPID: this.config.passkeyRpId,
        requireUserVerification: false,
      });
    } catch (err) {
      throw refused("credential", reasonOf(err));
    }
    if (!result.verified) throw refused("credential", "the attestation did not verify");
    const { credential: made } = result.registrationInfo;
    return {
      credentialId: made.id,
      publicKey: base64urlEncode(made.publicKey),
      counter: made.counter,
      transports,
    };
  }

  /** Verifies an assertion over `challenge` on `origin`; answers the new signature counter. */
  async authenticate(
    passkey: ScaPasskey,
    challenge: string,
    origin: string,
    assertion: Record<string, unknown>,
  ): Promise<number> {
    const response = record(assertion.response);
    const id = text(assertion.id);
    const clientDataJSON = text(response.clientDataJSON);
    const authenticatorData = text(response.authenticatorData);
    const signature = text(response.signature);
    if (!id || !clientDataJSON || !authenticatorData || !signature) {
      throw refused(
        "passkeyAssertion",
        "id, response.clientDataJSON, response.authenticatorData and response.signature are required",
      );
    }
    if (id !== passkey.credentialId) {
      throw refused("passkeyAssertion", "the assertion is not from the customer's passkey");
    }
    const userHandle = text(response.userHandle);
    const json: AuthenticationResponseJSON = {
      id,
      rawId: text(assertion.rawId) ?? id,
      type: "public-key",
      response: {
        clientDataJSON,
        authenticatorData,
        signature,
        ...(userHandle !== undefined ? { userHandle } : {}),
      },
      clientExtensionResults: {},
    };
    let result;
    try {
      result = await verifyAuthenticationResponse({
        response: json,
        expectedChallenge: challenge,
        expectedOrigin: origin,
        expectedRPID: this.config.passkeyRpId,
        credential: {
          id: passkey.credentialId,
          publicKey: base64urlDecode(passkey.publicKey) as Uint8Array<ArrayBuffer>,
          counter: passkey.counter,
          transports: passkey.transports.filter(isTransport),
        },
        requireUserVerification: false,
      });
    } catch (err) {
      throw refused("passkeyAssertion", reasonOf(err));
    }
    if (!result.verified) throw refused("passkeyAssertion", "the signature is not valid");
    return result.authenticationInfo.newCounter;
  }
}
