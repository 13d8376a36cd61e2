import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  SANDBOX_SCA_CODE,
  SCA_CHALLENGE_SECONDS,
  SCA_LOCKOUT_STEPS,
  SCA_MAX_ATTEMPTS,
  SCA_RESET_LIVENESS_SECONDS,
  SCA_RESET_MAX_PER_DAY,
  SCA_RESET_WINDOW_SECONDS,
  SCA_SUSPEND_AT_FAILED_LOGINS,
} from "@payments-sandbox/sandbox-rules";
import { databases, startSandbox, type TestSandbox } from "./harness.js";
import { advanceClock } from "./money-helpers.js";
import { ORIGIN, WRONG_CODE, scaSteps } from "./support/sca.js";

// Strong customer authentication: logging in with each factor, lockouts, and
// resetting a lost factor.

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
    enrolTotp,
    startLogin,
    completeLogin,
    recordEvent,
    near,
    now,
  } = scaSteps(() => sandbox);

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
    // The file's first test also compiles each operation's checks on first use.
  }, 90_000);

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
});
