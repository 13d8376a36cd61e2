import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxClient, Schemas } from "@payments-sandbox/client";
import {
  SANDBOX_CONTACT_VERIFICATION_CODE,
  SANDBOX_SCA_CODE,
  SCA_CHALLENGE_SECONDS,
  SCA_CODE_TABLE,
  SCA_LOCKOUT_STEPS,
  SCA_MAX_ATTEMPTS,
  SCA_RESET_LIVENESS_SECONDS,
  SCA_RESET_MAX_PER_DAY,
  SCA_RESET_WINDOW_SECONDS,
  SCA_SESSION_SECONDS,
  SCA_SUSPEND_AT_FAILED_LOGINS,
} from "@payments-sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import {
  advanceClock,
  balanceOf,
  bankAccountInfo,
  createAccount,
  createBankAccount,
  executeQuote,
  logInWithSca,
  withId,
} from "./money-helpers.js";
import { SoftwareAuthenticator } from "./support/authenticator.js";

const WRONG_CODE = "654321";
// The first use of each operation compiles its response check; these tests
// call many operations, or move money, and need longer on a busy machine.
const SLOW_TEST_MS = 90_000;
const ORIGIN = "http://localhost:3000";

/** The WebAuthn JSON a browser hands back from navigator.credentials.create. */
function registrationJson(
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
function assertionJson(authenticator: SoftwareAuthenticator, challenge: string, origin = ORIGIN) {
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

describe.each(databases)("strong customer authentication on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    // The passkeys here are made for an app page at ORIGIN.
    sandbox = await startSandbox(kind, { env: { PASSKEY_ORIGIN: ORIGIN } });
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  let serial = 0;
  /** An individual customer, French (so SCA applies) unless told otherwise, with a phone number. */
  async function customer(region = "FR", client: SandboxClient = sandbox.client) {
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
    await sandbox.client.POST("/customers/{customerId}/verify-phone", path);
    const { response } = await sandbox.client.POST("/customers/{customerId}/verify-phone/confirm", {
      ...path,
      body: { code: SANDBOX_CONTACT_VERIFICATION_CODE },
    });
    expect(response.status).toBe(200);
  }

  const query = (customerId: string) => ({ params: { query: { customerId } } });
  const factors = async (customerId: string) =>
    (await sandbox.client.GET("/sca/factors", query(customerId))).data?.factors;

  async function enrolTotp(customerId: string) {
    const { data } = await sandbox.client.POST("/sca/factors", {
      ...query(customerId),
      body: { type: "TOTP" },
    });
    if (data?.type !== "TOTP") throw new Error("no TOTP enrolment");
    const confirmed = await sandbox.client.POST("/sca/factors/confirm", {
      ...query(customerId),
      body: { type: "TOTP", secret: data.secret, code: SANDBOX_SCA_CODE },
    });
    expect(confirmed.response.status).toBe(200);
    return confirmed.data;
  }

  async function enrolPasskey(customerId: string, authenticator = new SoftwareAuthenticator()) {
    const { data } = await sandbox.client.POST("/sca/factors", {
      ...query(customerId),
      body: { type: "PASSKEY" },
    });
    if (data?.type !== "PASSKEY") throw new Error("no passkey enrolment");
    const confirmed = await sandbox.client.POST("/sca/factors/confirm", {
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
    sandbox.client.POST("/sca/login/start", { ...query(customerId), body: { factor } });
  const completeLogin = (customerId: string, body: Schemas["ScaLoginCompleteRequest"]) =>
    sandbox.client.POST("/sca/login/complete", { ...query(customerId), body });
  const recordEvent = (
    customerId: string,
    eventType: Schemas["RecordSecurityEventRequest"]["eventType"],
  ) => sandbox.client.POST("/sca/record-event", { ...query(customerId), body: { eventType } });
  /** Two instants within a few seconds of each other (the sandbox clock runs in real time). */
  const near = (actual: string | null | undefined, expected: number) =>
    expect(Math.abs(new Date(String(actual)).getTime() - expected)).toBeLessThan(5_000);
  const now = async () => {
    const { data } = await sandbox.client.GET("/sandbox/clock");
    return new Date(data!.now).getTime();
  };

  it("answers with the SCA code table's one row: 123456 for SMS and TOTP codes", () => {
    expect(SCA_CODE_TABLE.rows.map((row) => row.match)).toEqual([SANDBOX_SCA_CODE]);
    expect(SANDBOX_SCA_CODE).toBe("123456");
  });

  it(
    "answers 409 CONFLICT on every SCA operation for a customer outside the EEA (seed rule 10)",
    async () => {
      const american = await customer("US");
      const account = await createBankAccount(sandbox.client, american.id, "000", "EUR");
      const q = query(american.id);
      const reset = { params: { query: { customerId: american.id }, path: { resetId: "x" } } };
      const ea = { params: { path: { externalAccountId: account.id } } };
      const answers = [
        await sandbox.client.GET("/sca/factors", q),
        await sandbox.client.POST("/sca/factors", { ...q, body: { type: "TOTP" } }),
        await sandbox.client.POST("/sca/factors/confirm", {
          ...q,
          body: { type: "TOTP", secret: "s", code: SANDBOX_SCA_CODE },
        }),
        await sandbox.client.DELETE("/sca/factors/{credentialId}", {
          params: { query: { customerId: american.id }, path: { credentialId: "c" } },
        }),
        await startLogin(american.id, "SMS_OTP"),
        await completeLogin(american.id, {
          factor: "SMS_OTP",
          code: SANDBOX_SCA_CODE,
          endUserIpAddress: "203.0.113.42",
        }),
        await recordEvent(american.id, "FAILED_LOGIN_ATTEMPT"),
        await sandbox.client.POST("/sca/factors/reset", { ...q, body: { factor: "SMS_OTP" } }),
        await sandbox.client.GET("/sca/factors/reset/{resetId}", reset),
        await sandbox.client.POST("/sca/factors/reset/{resetId}/complete", reset),
        await sandbox.client.POST("/customers/external-accounts/{externalAccountId}/trust", ea),
        await sandbox.client.POST(
          "/customers/external-accounts/{externalAccountId}/trust/confirm",
          {
            ...ea,
            body: { code: SANDBOX_SCA_CODE },
          },
        ),
        await sandbox.client.POST("/customers/external-accounts/{externalAccountId}/untrust", ea),
        await sandbox.client.POST(
          "/customers/external-accounts/{externalAccountId}/untrust/confirm",
          {
            ...ea,
            body: { code: SANDBOX_SCA_CODE },
          },
        ),
      ];
      expect(answers).toHaveLength(14);
      for (const answer of answers) {
        expect(answer.response.status).toBe(409);
        expect(answer.error).toMatchObject({ status: 409, code: "CONFLICT" });
      }
    },
    SLOW_TEST_MS,
  );

  it("answers 404 for another platform's customer and beneficiary", async () => {
    const other = await sandbox.otherPlatformClient();
    const theirs = await customer("FR", other);
    const theirAccount = await createBankAccount(other, theirs.id, "000", "EUR");
    for (const answer of [
      await sandbox.client.GET("/sca/factors", query(theirs.id)),
      await startLogin(theirs.id, "SMS_OTP"),
      await recordEvent(theirs.id, "FAILED_LOGIN_ATTEMPT"),
    ]) {
      expect(answer.error).toMatchObject({ status: 404, code: "USER_NOT_FOUND" });
    }
    const trust = await sandbox.client.POST(
      "/customers/external-accounts/{externalAccountId}/trust",
      { params: { path: { externalAccountId: theirAccount.id } } },
    );
    expect(trust.error).toMatchObject({ status: 404, code: "REFERENCE_NOT_FOUND" });
    // Their factors are theirs: our platform's view of their customer is nothing.
    expect((await other.GET("/sca/factors", query(theirs.id))).data).toEqual({ factors: [] });
  });

  it("lists SMS_OTP once the phone number is verified", async () => {
    const { id } = await customer();
    expect(await factors(id)).toEqual([]);
    await verifyPhone(id);
    expect(await factors(id)).toEqual([{ factor: "SMS_OTP" }]);
  });

  it("enrols a TOTP factor: a secret, then the sandbox code; wrong codes count down", async () => {
    const { id } = await customer();
    const { data } = await sandbox.client.POST("/sca/factors", {
      ...query(id),
      body: { type: "TOTP" },
    });
    if (data?.type !== "TOTP") throw new Error("no TOTP enrolment");
    expect(data.secretBase32Encoded).toMatch(/^[A-Z2-7]{32}$/);
    expect(data.totpUri).toBe(
      `otpauth://totp/Sandbox:${encodeURIComponent(`camille.sca.${serial}@example.fr`)}?secret=${data.secretBase32Encoded}&issuer=Sandbox`,
    );
    const confirm = (secret: string, code: string) =>
      sandbox.client.POST("/sca/factors/confirm", {
        ...query(id),
        body: { type: "TOTP", secret, code },
      });
    const otherSecret = await confirm("not-the-secret", SANDBOX_SCA_CODE);
    expect(otherSecret.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    const wrong = await confirm(data.secret, WRONG_CODE);
    expect(wrong.error).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
      details: { attemptsLeft: SCA_MAX_ATTEMPTS - 1 },
    });
    const right = await confirm(data.secret, SANDBOX_SCA_CODE);
    expect(right.data).toMatchObject({ type: "TOTP" });
    const codes = right.data?.type === "TOTP" ? right.data.recoveryCodes : [];
    expect(codes).toHaveLength(10);
    for (const code of codes) expect(code).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    expect(await factors(id)).toEqual([{ factor: "TOTP", name: "Authenticator app" }]);
    // The enrolment is used up.
    expect((await confirm(data.secret, SANDBOX_SCA_CODE)).error).toMatchObject({ status: 400 });
  });

  it(`ends a TOTP enrolment after ${SCA_MAX_ATTEMPTS} wrong codes, and after ${SCA_CHALLENGE_SECONDS} seconds`, async () => {
    const { id } = await customer();
    const start = async () => {
      const { data } = await sandbox.client.POST("/sca/factors", {
        ...query(id),
        body: { type: "TOTP" },
      });
      if (data?.type !== "TOTP") throw new Error("no TOTP enrolment");
      return data.secret;
    };
    const confirm = (secret: string, code: string) =>
      sandbox.client.POST("/sca/factors/confirm", {
        ...query(id),
        body: { type: "TOTP", secret, code },
      });
    const secret = await start();
    const left: unknown[] = [];
    for (let i = 0; i < SCA_MAX_ATTEMPTS; i++) {
      left.push((await confirm(secret, WRONG_CODE)).error?.details?.attemptsLeft);
    }
    expect(left).toEqual([4, 3, 2, 1, 0]);
    expect((await confirm(secret, SANDBOX_SCA_CODE)).error).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
    });

    const late = await start();
    await advanceClock(sandbox.client, SCA_CHALLENGE_SECONDS);
    const expired = await confirm(late, SANDBOX_SCA_CODE);
    expect(expired.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    expect(expired.error?.message).toMatch(/expired/);
    expect(await factors(id)).toEqual([]);
  });

  it("enrols one passkey with real WebAuthn, logs in with it, and deletes it", async () => {
    const { id } = await customer();
    const { data: started } = await sandbox.client.POST("/sca/factors", {
      ...query(id),
      body: { type: "PASSKEY" },
    });
    if (started?.type !== "PASSKEY") throw new Error("no passkey enrolment");
    expect(started).toMatchObject({ relyingPartyId: "localhost", allowedOrigins: [ORIGIN] });
    expect(started.options).toMatchObject({ rp: { id: "localhost" }, attestation: "none" });
    const authenticator = new SoftwareAuthenticator();
    const challenge = String(started.options.challenge);
    const confirm = (body: Schemas["PasskeyEnrollmentConfirmRequest"]) =>
      sandbox.client.POST("/sca/factors/confirm", { ...query(id), body });
    // Made on an origin the relying party does not allow, or over another challenge: refused.
    const badOrigin = await confirm({
      type: "PASSKEY",
      origin: "https://evil.example",
      credential: registrationJson(authenticator, challenge, "https://evil.example"),
    });
    expect(badOrigin.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    const otherChallenge = await confirm({
      type: "PASSKEY",
      origin: ORIGIN,
      credential: registrationJson(authenticator, "b3RoZXI"),
    });
    expect(otherChallenge.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });

    const enrolled = await confirm({
      type: "PASSKEY",
      origin: ORIGIN,
      credential: registrationJson(authenticator, challenge),
    });
    expect(enrolled.data).toEqual({
      type: "PASSKEY",
      factor: { factor: "PASSKEY", credentialId: authenticator.credentialId, name: "Passkey" },
    });
    const second = await sandbox.client.POST("/sca/factors", {
      ...query(id),
      body: { type: "PASSKEY" },
    });
    expect(second.error).toMatchObject({ status: 409, code: "PASSKEY_ALREADY_ENROLLED" });

    const login = await startLogin(id, "PASSKEY");
    expect(login.data).toMatchObject({
      factor: "PASSKEY",
      relyingPartyId: "localhost",
      allowedOrigins: [ORIGIN],
      passkeyOptions: { allowCredentials: [{ id: authenticator.credentialId }] },
    });
    const loginChallenge = String(login.data?.passkeyOptions?.challenge);
    const stranger = new SoftwareAuthenticator();
    const refused = await completeLogin(id, {
      factor: "PASSKEY",
      endUserIpAddress: "203.0.113.42",
      origin: ORIGIN,
      passkeyAssertion: assertionJson(stranger, loginChallenge),
    });
    expect(refused.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    const before = await now();
    const done = await completeLogin(id, {
      factor: "PASSKEY",
      endUserIpAddress: "203.0.113.42",
      origin: ORIGIN,
      passkeyAssertion: assertionJson(authenticator, loginChallenge),
    });
    expect(done.data?.status).toBe("SUCCESS");
    expect(new Date(done.data!.sessionExpiresAt!).getTime()).toBeGreaterThanOrEqual(
      before + SCA_SESSION_SECONDS * 1000,
    );

    const remove = (credentialId: string) =>
      sandbox.client.DELETE("/sca/factors/{credentialId}", {
        params: { query: { customerId: id }, path: { credentialId } },
      });
    expect((await remove(authenticator.credentialId)).response.status).toBe(204);
    expect((await remove(authenticator.credentialId)).error).toMatchObject({
      status: 404,
      code: "REFERENCE_NOT_FOUND",
    });
    expect(await factors(id)).toEqual([]);
    // With the first one gone, another passkey can be enrolled.
    await enrolPasskey(id);
  });

  it("logs in with an SMS code: a challenge, its id echoed, the sandbox code", async () => {
    const { id } = await customer();
    const early = await startLogin(id, "SMS_OTP");
    expect(early.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    expect((await startLogin(id, "TOTP")).error).toMatchObject({ status: 400 });
    expect((await startLogin(id, "PASSKEY")).error).toMatchObject({ status: 400 });
    await verifyPhone(id);
    const before = await now();
    const { data } = await startLogin(id, "SMS_OTP");
    expect(data).toMatchObject({
      factor: "SMS_OTP",
      challengeId: expect.stringMatching(/^ScaChallenge:/),
    });
    near(data!.expiresAt, before + SCA_CHALLENGE_SECONDS * 1000);
    const answer = (code: string, challengeId = data!.challengeId) =>
      completeLogin(id, { factor: "SMS_OTP", challengeId, code, endUserIpAddress: "203.0.113.42" });
    expect((await answer(SANDBOX_SCA_CODE, "ScaChallenge:other")).error).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
    });
    // A proof is required, `code` or `passkeyAssertion` with `origin` (the
    // contract's anyOf), and an SMS login takes the code; neither costs an attempt.
    const login = { factor: "SMS_OTP" as const, challengeId: data!.challengeId };
    const noProof = await completeLogin(id, { ...login, endUserIpAddress: "203.0.113.42" });
    expect(noProof.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    const passkeyProof = await completeLogin(id, {
      ...login,
      passkeyAssertion: {},
      origin: ORIGIN,
      endUserIpAddress: "203.0.113.42",
    });
    expect(passkeyProof.error).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
      details: { errors: [expect.objectContaining({ field: "code" })] },
    });
    expect((await answer(WRONG_CODE)).error).toMatchObject({
      status: 400,
      code: "INVALID_INPUT",
      details: { attemptsLeft: SCA_MAX_ATTEMPTS - 1 },
    });
    expect((await answer(SANDBOX_SCA_CODE)).data).toMatchObject({ status: "SUCCESS" });
    // The challenge is consumed.
    expect((await answer(SANDBOX_SCA_CODE)).error).toMatchObject({ status: 400 });

    // An expired login code.
    const late = await startLogin(id, "SMS_OTP");
    await advanceClock(sandbox.client, SCA_CHALLENGE_SECONDS);
    const expired = await answer(SANDBOX_SCA_CODE, late.data!.challengeId);
    expect(expired.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    expect(expired.error?.message).toMatch(/expired/);
  });

  it("logs in with a TOTP code", async () => {
    const { id } = await customer();
    await enrolTotp(id);
    expect((await startLogin(id, "TOTP")).data).toEqual({ factor: "TOTP" });
    const wrong = await completeLogin(id, {
      factor: "TOTP",
      code: WRONG_CODE,
      endUserIpAddress: "203.0.113.42",
    });
    expect(wrong.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    const right = await completeLogin(id, {
      factor: "TOTP",
      code: SANDBOX_SCA_CODE,
      endUserIpAddress: "203.0.113.42",
    });
    expect(right.data).toMatchObject({ status: "SUCCESS" });
  });

  it("locks the login after failed attempts, step by step, then suspends it until a password reset", async () => {
    const { id } = await customer();
    await verifyPhone(id);
    // Five wrong login codes: the challenge is spent and the customer locked for 15 minutes.
    const { data } = await startLogin(id, "SMS_OTP");
    for (let i = 0; i < SCA_MAX_ATTEMPTS; i++) {
      await completeLogin(id, {
        factor: "SMS_OTP",
        challengeId: data!.challengeId,
        code: WRONG_CODE,
        endUserIpAddress: "203.0.113.42",
      });
    }
    const first = SCA_LOCKOUT_STEPS[0]!;
    const locked = await completeLogin(id, {
      factor: "SMS_OTP",
      challengeId: data!.challengeId,
      code: SANDBOX_SCA_CODE,
      endUserIpAddress: "203.0.113.42",
    });
    expect(locked.response.status).toBe(423);
    expect(locked.error).toMatchObject({
      status: 423,
      code: "ACCOUNT_LOCKED",
      details: { suspended: false, failedAttempts: first.failedAttempts },
    });
    near(String(locked.error?.details?.lockedUntil), (await now()) + first.seconds * 1000);
    expect((await recordEvent(id, "FAILED_LOGIN_ATTEMPT")).error).toMatchObject({
      status: 423,
      code: "ACCOUNT_LOCKED",
    });

    // Each later step locks for longer.
    for (let i = 1; i < SCA_LOCKOUT_STEPS.length; i++) {
      const step = SCA_LOCKOUT_STEPS[i]!;
      await advanceClock(sandbox.client, SCA_LOCKOUT_STEPS[i - 1]!.seconds);
      const at = await now();
      const { data: state } = await recordEvent(id, "FAILED_LOGIN_ATTEMPT");
      expect(state).toMatchObject({
        eventType: "FAILED_LOGIN_ATTEMPT",
        suspended: false,
        failedAttempts: step.failedAttempts,
      });
      near(state?.lockedUntil, at + step.seconds * 1000);
    }
    await advanceClock(sandbox.client, SCA_LOCKOUT_STEPS.at(-1)!.seconds);
    const suspended = await recordEvent(id, "FAILED_LOGIN_ATTEMPT");
    expect(suspended.data).toEqual({
      eventType: "FAILED_LOGIN_ATTEMPT",
      suspended: true,
      lockedUntil: null,
      failedAttempts: SCA_SUSPEND_AT_FAILED_LOGINS,
    });
    const stillSuspended = await completeLogin(id, {
      factor: "SMS_OTP",
      code: SANDBOX_SCA_CODE,
      endUserIpAddress: "203.0.113.42",
    });
    expect(stillSuspended.error).toMatchObject({
      status: 423,
      code: "ACCOUNT_LOCKED",
      details: { suspended: true },
    });

    const cleared = await recordEvent(id, "RESET_PASSWORD_COMPLETED");
    expect(cleared.data).toEqual({
      eventType: "RESET_PASSWORD_COMPLETED",
      suspended: false,
      lockedUntil: null,
      failedAttempts: 0,
    });
    const again = await startLogin(id, "SMS_OTP");
    const ok = await completeLogin(id, {
      factor: "SMS_OTP",
      challengeId: again.data!.challengeId,
      code: SANDBOX_SCA_CODE,
      endUserIpAddress: "203.0.113.42",
    });
    expect(ok.data).toMatchObject({ status: "SUCCESS" });
  });

  it("resets a lost TOTP factor once liveness passes; the customer enrols again", async () => {
    const { id } = await customer();
    await enrolTotp(id);
    const { data: started, response } = await sandbox.client.POST("/sca/factors/reset", {
      ...query(id),
      body: { factor: "TOTP" },
    });
    expect(response.status).toBe(201);
    expect(started?.livenessAccessToken).toMatch(/^liveness_/);
    const path = { params: { query: { customerId: id }, path: { resetId: started!.resetId } } };
    const status = async () =>
      (await sandbox.client.GET("/sca/factors/reset/{resetId}", path)).data;
    expect(await status()).toMatchObject({
      status: "INITIATED",
      factor: "TOTP",
      enrollmentStatus: "PENDING",
      expiresAt: started!.expiresAt,
      completedAt: null,
    });
    const early = await sandbox.client.POST("/sca/factors/reset/{resetId}/complete", path);
    expect(early.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });

    await advanceClock(sandbox.client, SCA_RESET_LIVENESS_SECONDS);
    expect((await status())?.status).toBe("LIVENESS_PASSED");
    const done = await sandbox.client.POST("/sca/factors/reset/{resetId}/complete", path);
    expect(done.response.status).toBe(204);
    expect(await status()).toMatchObject({
      status: "COMPLETED",
      enrollmentStatus: "PENDING",
      completedAt: expect.any(String),
    });
    expect(await factors(id)).toEqual([]);
    const twice = await sandbox.client.POST("/sca/factors/reset/{resetId}/complete", path);
    expect(twice.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    await enrolTotp(id);
    expect((await status())?.enrollmentStatus).toBe("COMPLETED");

    const unknown = await sandbox.client.GET("/sca/factors/reset/{resetId}", {
      params: { query: { customerId: id }, path: { resetId: "ScaFactorReset:unknown" } },
    });
    expect(unknown.error).toMatchObject({ status: 404, code: "REFERENCE_NOT_FOUND" });
  });

  it("resets SMS_OTP to a new mobile number, which becomes the verified phone", async () => {
    const { id } = await customer();
    await verifyPhone(id);
    const { data: started } = await sandbox.client.POST("/sca/factors/reset", {
      ...query(id),
      body: { factor: "SMS_OTP" },
    });
    const path = { params: { query: { customerId: id }, path: { resetId: started!.resetId } } };
    expect(
      (await sandbox.client.GET("/sca/factors/reset/{resetId}", path)).data?.enrollmentStatus,
    ).toBeNull();
    await advanceClock(sandbox.client, SCA_RESET_LIVENESS_SECONDS);
    const noMobile = await sandbox.client.POST("/sca/factors/reset/{resetId}/complete", path);
    expect(noMobile.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    const done = await sandbox.client.POST("/sca/factors/reset/{resetId}/complete", {
      ...path,
      body: { mobile: { countryCode: "+33", number: "698765432" } },
    });
    expect(done.response.status).toBe(204);
    const { data: after } = await sandbox.client.GET("/customers/{customerId}", {
      params: { path: { customerId: id } },
    });
    expect(after).toMatchObject({
      phoneNumber: "+33698765432",
      contactVerification: { phone: "VERIFIED" },
    });
    expect(await factors(id)).toEqual([{ factor: "SMS_OTP" }]);
  });

  it(`lets a reset expire after ${SCA_RESET_WINDOW_SECONDS / 60} minutes, and limits resets to ${SCA_RESET_MAX_PER_DAY} a day`, async () => {
    const { id } = await customer();
    await verifyPhone(id);
    const start = () =>
      sandbox.client.POST("/sca/factors/reset", { ...query(id), body: { factor: "SMS_OTP" } });
    const { data: first } = await start();
    await advanceClock(sandbox.client, SCA_RESET_WINDOW_SECONDS);
    const path = { params: { query: { customerId: id }, path: { resetId: first!.resetId } } };
    expect((await sandbox.client.GET("/sca/factors/reset/{resetId}", path)).data?.status).toBe(
      "EXPIRED",
    );
    const late = await sandbox.client.POST("/sca/factors/reset/{resetId}/complete", {
      ...path,
      body: { mobile: { countryCode: "+33", number: "698765432" } },
    });
    expect(late.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });

    for (let i = 1; i < SCA_RESET_MAX_PER_DAY; i++) {
      expect((await start()).response.status).toBe(201);
    }
    const limited = await start();
    expect(limited.response.status).toBe(429);
    expect(limited.error).toMatchObject({ status: 429, code: "RATE_LIMITED" });
    const retryAfter = Number(limited.response.headers.get("Retry-After"));
    expect(Math.abs(retryAfter - (24 * 3600 - SCA_RESET_WINDOW_SECONDS))).toBeLessThan(5);
  });

  it("refuses a reset of a factor the customer does not have", async () => {
    const { id } = await customer();
    const none = await sandbox.client.POST("/sca/factors/reset", {
      ...query(id),
      body: { factor: "PASSKEY" },
    });
    expect(none.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
  });

  describe("trusted beneficiaries", () => {
    const ea = (externalAccountId: string) => ({ params: { path: { externalAccountId } } });
    const trust = (id: string) =>
      sandbox.client.POST("/customers/external-accounts/{externalAccountId}/trust", ea(id));
    const confirmTrust = (id: string, body: Schemas["BeneficiaryTrustConfirmRequest"]) =>
      sandbox.client.POST("/customers/external-accounts/{externalAccountId}/trust/confirm", {
        ...ea(id),
        body,
      });
    const untrust = (id: string) =>
      sandbox.client.POST("/customers/external-accounts/{externalAccountId}/untrust", ea(id));
    const confirmUntrust = (id: string, body: Schemas["BeneficiaryTrustConfirmRequest"]) =>
      sandbox.client.POST("/customers/external-accounts/{externalAccountId}/untrust/confirm", {
        ...ea(id),
        body,
      });

    it(
      "trusts a beneficiary with the SMS code; its quotes need no challenge; untrusting brings them back",
      async () => {
        const { id } = await customer("DE");
        const iban = await createBankAccount(sandbox.client, id, "000", "EUR");
        const before = await now();
        const started = await trust(iban.id);
        expect(started.data).toEqual({
          scaChallenge: {
            id: expect.stringMatching(/^ScaChallenge:/),
            expiresAt: expect.any(String),
            factor: "SMS_OTP",
            availableFactors: ["SMS_OTP"],
          },
        });
        near(started.data?.scaChallenge?.expiresAt, before + SCA_CHALLENGE_SECONDS * 1000);
        const challengeId = started.data!.scaChallenge!.id;
        expect(
          (
            await confirmTrust(iban.id, {
              challengeId: "ScaChallenge:other",
              code: SANDBOX_SCA_CODE,
            })
          ).error,
        ).toMatchObject({
          status: 400,
          code: "INVALID_INPUT",
        });
        expect(
          (await confirmTrust(iban.id, { challengeId, code: WRONG_CODE })).error,
        ).toMatchObject({
          status: 400,
          code: "INVALID_INPUT",
          details: { attemptsLeft: SCA_MAX_ATTEMPTS - 1 },
        });
        expect((await confirmTrust(iban.id, { challengeId, code: SANDBOX_SCA_CODE })).data).toEqual(
          {
            trusted: true,
          },
        );

        // A trusted beneficiary cannot be deleted.
        const deleting = await sandbox.client.DELETE(
          "/customers/external-accounts/{externalAccountId}",
          ea(iban.id),
        );
        expect(deleting.error).toMatchObject({ status: 409, code: "BENEFICIARY_TRUSTED" });

        // A payment to it is executed without a challenge.
        const account = await createAccount(sandbox.client, id, "USD", 20_000);
        const quote = async () => {
          const { data } = await sandbox.client.POST("/quotes", {
            body: {
              source: { sourceType: "ACCOUNT", accountId: account.id },
              destination: { destinationType: "ACCOUNT", accountId: iban.id },
              lockedCurrencySide: "SENDING",
              lockedCurrencyAmount: 3_000,
            },
          });
          return data!;
        };
        const paid = await executeQuote(sandbox.client, (await quote()).id);
        expect(paid.data?.status).toBe("COMPLETED");
        expect(paid.data).not.toHaveProperty("scaChallenge");
        expect(await balanceOf(sandbox.client, account.id)).toBe(17_000);

        const { data: untrustStarted } = await untrust(iban.id);
        expect(untrustStarted?.scaChallenge?.factor).toBe("SMS_OTP");
        expect((await confirmUntrust(iban.id, { code: SANDBOX_SCA_CODE })).data).toEqual({
          trusted: false,
        });
        const held = await executeQuote(sandbox.client, (await quote()).id);
        expect(held.data).toMatchObject({
          status: "PENDING_AUTHORIZATION",
          scaChallenge: { factor: "SMS_OTP" },
        });
        await logInWithSca(sandbox.client, id);
        const released = await sandbox.client.POST("/quotes/{quoteId}/authorize", {
          params: { path: { quoteId: held.data!.id } },
          body: { code: SANDBOX_SCA_CODE },
        });
        expect(released.data?.status).toBe("COMPLETED");

        const deleted = await sandbox.client.DELETE(
          "/customers/external-accounts/{externalAccountId}",
          ea(iban.id),
        );
        expect(deleted.response.status).toBe(204);
      },
      SLOW_TEST_MS,
    );

    it("refuses a confirmation with no challenge, an expired one, or one spent by wrong codes", async () => {
      const { id } = await customer();
      const iban = await createBankAccount(sandbox.client, id, "000", "EUR");
      const none = await confirmTrust(iban.id, { code: SANDBOX_SCA_CODE });
      expect(none.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
      // No proof at all is refused by the contract's anyOf.
      expect((await confirmTrust(iban.id, {})).error).toMatchObject({
        status: 400,
        code: "INVALID_INPUT",
      });
      const noCode = await trust(iban.id);
      expect(noCode.response.status).toBe(200);
      expect(
        (await confirmTrust(iban.id, { passkeyAssertion: {}, origin: ORIGIN })).error,
      ).toMatchObject({ status: 400, code: "INVALID_INPUT" });

      const left: unknown[] = [];
      for (let i = 0; i < SCA_MAX_ATTEMPTS; i++) {
        left.push((await confirmTrust(iban.id, { code: WRONG_CODE })).error?.details?.attemptsLeft);
      }
      expect(left).toEqual([4, 3, 2, 1, 0]);
      expect((await confirmTrust(iban.id, { code: SANDBOX_SCA_CODE })).error).toMatchObject({
        status: 400,
        code: "INVALID_INPUT",
      });

      await trust(iban.id);
      await advanceClock(sandbox.client, SCA_CHALLENGE_SECONDS);
      const expired = await confirmTrust(iban.id, { code: SANDBOX_SCA_CODE });
      expect(expired.error).toMatchObject({ status: 400, code: "INVALID_INPUT" });
      expect(expired.error?.message).toMatch(/expired/);
    });

    it("does not know a platform's own external account as a beneficiary", async () => {
      const { data } = await sandbox.client.POST("/platform/external-accounts", {
        body: { currency: "USD", accountInfo: bankAccountInfo("000") },
      });
      expect(data?.id).toBeDefined();
      const answer = await trust(data!.id);
      expect(answer.error).toMatchObject({ status: 404, code: "REFERENCE_NOT_FOUND" });
    });
  });
});
