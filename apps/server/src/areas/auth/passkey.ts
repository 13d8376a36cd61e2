import { base64urlDecode, base64urlEncode } from "@payments-sandbox/crypto";
import {
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticatorTransportFuture,
} from "@simplewebauthn/server";
import type { Schemas } from "@payments-sandbox/client";
import type { AuthConfig } from "../../config.js";
import { ApiError } from "../../errors.js";

type Attestation = Schemas["PasskeyAttestation"];
type Assertion = Schemas["PasskeyAssertion"];

/** A registered passkey as stored on its AuthMethod. */
export interface StoredPasskey {
  credentialId: string;
  /** COSE public key, base64url. */
  publicKey: string;
  counter: number;
  transports: string[];
}

const reasonOf = (err: unknown): string =>
  err instanceof Error ? err.message : "WebAuthn verification failed";

/** WebAuthn ceremonies against the configured relying party. */
export class PasskeyVerifier {
  constructor(private readonly config: AuthConfig) {}

  /**
   * Verifies a registration (attestation) made over `challenge`, the
   * base64url challenge the integrator passed to navigator.credentials.create.
   */
  async verifyRegistration(challenge: string, attestation: Attestation): Promise<StoredPasskey> {
    const invalid = (reason: string) =>
      new ApiError(400, "INVALID_INPUT", "The passkey attestation could not be verified.", {
        reason,
      });
    let result;
    try {
      result = await verifyRegistrationResponse({
        response: {
          id: attestation.credentialId,
          rawId: attestation.credentialId,
          type: "public-key",
          response: {
            clientDataJSON: attestation.clientDataJson,
            attestationObject: attestation.attestationObject,
            ...(attestation.transports
              ? { transports: attestation.transports as AuthenticatorTransportFuture[] }
              : {}),
          },
          clientExtensionResults: {},
        },
        expectedChallenge: challenge,
        expectedOrigin: this.config.passkeyOrigins,
        expectedRPID: this.config.passkeyRpId,
        requireUserVerification: false,
      });
    } catch (err) {
      throw invalid(reasonOf(err));
    }
    if (!result.verified) throw invalid("Attestation did not verify");
    const { credential } = result.registrationInfo;
    if (credential.id !== attestation.credentialId) {
      throw invalid("credentialId differs from the credential in the attestation");
    }
    return {
      credentialId: credential.id,
      publicKey: base64urlEncode(credential.publicKey),
      counter: credential.counter,
      transports: attestation.transports ?? [],
    };
  }

  /**
   * Verifies an assertion over `challengeHex` (the browser signs the UTF-8
   * bytes of the hex string). Returns the new signature counter.
   */
  async verifyAssertion(
    passkey: StoredPasskey,
    challengeHex: string,
    assertion: Assertion,
  ): Promise<number> {
    const rejected = (reason: string) =>
      new ApiError(401, "UNAUTHORIZED", "The passkey assertion was rejected.", { reason });
    if (assertion.credentialId !== passkey.credentialId) {
      throw rejected("Assertion credentialId is not this credential's passkey");
    }
    let result;
    try {
      result = await verifyAuthenticationResponse({
        response: {
          id: assertion.credentialId,
          rawId: assertion.credentialId,
          type: "public-key",
          response: {
            clientDataJSON: assertion.clientDataJson,
            authenticatorData: assertion.authenticatorData,
            signature: assertion.signature,
            ...(assertion.userHandle !== undefined ? { userHandle: assertion.userHandle } : {}),
          },
          clientExtensionResults: {},
        },
        expectedChallenge: base64urlEncode(challengeHex),
        expectedOrigin: this.config.passkeyOrigins,
        expectedRPID: this.config.passkeyRpId,
        credential: {
          id: passkey.credentialId,
          publicKey: base64urlDecode(passkey.publicKey) as Uint8Array<ArrayBuffer>,
          counter: passkey.counter,
          transports: passkey.transports as AuthenticatorTransportFuture[],
        },
        requireUserVerification: false,
      });
    } catch (err) {
      throw rejected(reasonOf(err));
    }
    if (!result.verified) throw rejected("Assertion signature is not valid");
    return result.authenticationInfo.newCounter;
  }
}
