// Steps the strong customer authentication tests share: an EEA customer, its
// verified phone, enrolled factors, logins, and the WebAuthn JSON a browser
// would send. Each describe.each block starts its own sandbox, so the steps
// read it through a getter rather than holding one.
import { expect } from "vitest";
import type { SandboxClient, Schemas } from "@payments-sandbox/client";
import {
  SANDBOX_CONTACT_VERIFICATION_CODE,
  SANDBOX_SCA_CODE,
} from "@payments-sandbox/sandbox-rules";
import type { TestSandbox } from "../harness.js";
import { withId } from "../money-helpers.js";
import { SoftwareAuthenticator } from "./authenticator.js";

export const WRONG_CODE = "654321";
// The first use of each operation compiles its response check; these tests
// call many operations, or move money, and need longer on a busy machine.
export const SLOW_TEST_MS = 90_000;
/** The app page the passkeys are made for: start the sandbox with it as PASSKEY_ORIGIN. */
export const ORIGIN = "http://localhost:3000";

/** The WebAuthn JSON a browser hands back from navigator.credentials.create. */
export function registrationJson(
  authenticator: SoftwareAuthenticator,
  challenge: string,
  origin = ORIGIN,
) {
  const made = authenticator.create(challenge, { origin });
  return {
    id: made.credentialId,
    rawId: made.credentialId,
    type: "public-key",
    response: {
      clientDataJSON: made.clientDataJson,
      attestationObject: made.attestationObject,
      transports: made.transports,
    },
    clientExtensionResults: {},
  };
}

/** The WebAuthn JSON a browser hands back from navigator.credentials.get. */
export function assertionJson(
  authenticator: SoftwareAuthenticator,
  challenge: string,
  origin = ORIGIN,
) {
  // The sandbox's challenges are base64url of a hex string, which the authenticator signs as text.
  const made = authenticator.get(Buffer.from(challenge, "base64url").toString(), { origin });
  return {
    id: made.credentialId,
    rawId: made.credentialId,
    type: "public-key",
    response: {
      clientDataJSON: made.clientDataJson,
      authenticatorData: made.authenticatorData,
      signature: made.signature,
    },
    clientExtensionResults: {},
  };
}

/** How many customers `customer()` has made: each has its own email address. */
export let serial = 0;

export function scaSteps(current: () => TestSandbox) {
  /** An individual customer, French (so SCA applies) unless told otherwise, with a phone number. */
  async function customer(region = "FR", client: SandboxClient = current().client) {
    serial += 1;
    const { data, error } = await client.POST("/customers", {
      body: {
        customerType: "INDIVIDUAL",
        fullName: "Camille Martin",
        region,
        email: `camille.sca.${serial}@example.fr`,
        phoneNumber: "+33612345678",
      },
    });
    if (!data) throw new Error(`customer not created: ${JSON.stringify(error)}`);
    return withId(data);
  }

  /** Verifies the customer's phone number: its SMS_OTP factor. */
  async function verifyPhone(customerId: string) {
    const path = { params: { path: { customerId } } };
    await current().client.POST("/customers/{customerId}/verify-phone", path);
    const { response } = await current().client.POST(
      "/customers/{customerId}/verify-phone/confirm",
      {
        ...path,
        body: { code: SANDBOX_CONTACT_VERIFICATION_CODE },
      },
    );
    expect(response.status).toBe(200);
  }

  const query = (customerId: string) => ({ params: { query: { customerId } } });
  const factors = async (customerId: string) =>
    (await current().client.GET("/sca/factors", query(customerId))).data?.factors;

  async function enrolTotp(customerId: string) {
    const { data } = await current().client.POST("/sca/factors", {
      ...query(customerId),
      body: { type: "TOTP" },
    });
    if (data?.type !== "TOTP") throw new Error("no TOTP enrolment");
    const confirmed = await current().client.POST("/sca/factors/confirm", {
      ...query(customerId),
      body: { type: "TOTP", secret: data.secret, code: SANDBOX_SCA_CODE },
    });
    expect(confirmed.response.status).toBe(200);
    return confirmed.data;
  }

  async function enrolPasskey(customerId: string, authenticator = new SoftwareAuthenticator()) {
    const { data } = await current().client.POST("/sca/factors", {
      ...query(customerId),
      body: { type: "PASSKEY" },
    });
    if (data?.type !== "PASSKEY") throw new Error("no passkey enrolment");
    const confirmed = await current().client.POST("/sca/factors/confirm", {
      ...query(customerId),
      body: {
        type: "PASSKEY",
        origin: ORIGIN,
        credential: registrationJson(authenticator, String(data.options.challenge)),
      },
    });
    expect(confirmed.response.status).toBe(200);
    return authenticator;
  }

  const startLogin = (customerId: string, factor: Schemas["ScaFactor"]) =>
    current().client.POST("/sca/login/start", { ...query(customerId), body: { factor } });
  const completeLogin = (customerId: string, body: Schemas["ScaLoginCompleteRequest"]) =>
    current().client.POST("/sca/login/complete", { ...query(customerId), body });
  const recordEvent = (
    customerId: string,
    eventType: Schemas["RecordSecurityEventRequest"]["eventType"],
  ) => current().client.POST("/sca/record-event", { ...query(customerId), body: { eventType } });
  /** Two instants within a few seconds of each other (the sandbox clock runs in real time). */
  const near = (actual: string | null | undefined, expected: number) =>
    expect(Math.abs(new Date(String(actual)).getTime() - expected)).toBeLessThan(5_000);
  const now = async () => {
    const { data } = await current().client.GET("/sandbox/clock");
    return new Date(data!.now).getTime();
  };

  return {
    customer,
    verifyPhone,
    query,
    factors,
    enrolTotp,
    enrolPasskey,
    startLogin,
    completeLogin,
    recordEvent,
    near,
    now,
  };
}
