import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Schemas } from "@payments-sandbox/client";
import {
  SANDBOX_SCA_CODE,
  SCA_CHALLENGE_SECONDS,
  SCA_CODE_TABLE,
  SCA_MAX_ATTEMPTS,
  SCA_SESSION_SECONDS,
} from "@payments-sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { advanceClock, createBankAccount } from "./money-helpers.js";
import { SoftwareAuthenticator } from "./support/authenticator.js";
import {
  ORIGIN,
  SLOW_TEST_MS,
  WRONG_CODE,
  assertionJson,
  registrationJson,
  scaSteps,
  serial,
} from "./support/sca.js";

// Strong customer authentication: where it applies, and enrolling its factors.
// Logins and resets are in sca-login.test.ts, trusted beneficiaries in
// sca-beneficiaries.test.ts.

describe.each(databases)("strong customer authentication on %s", (kind) => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    // The passkeys here are made for an app page at ORIGIN.
    sandbox = await startSandbox(kind, { env: { PASSKEY_ORIGIN: ORIGIN } });
  });
  afterAll(async () => {
    await sandbox?.stop();
  });

  const {
    customer,
    verifyPhone,
    query,
    factors,
    enrolPasskey,
    startLogin,
    completeLogin,
    recordEvent,
    now,
  } = scaSteps(() => sandbox);

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
});
