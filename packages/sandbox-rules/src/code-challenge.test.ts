import { describe, expect, it } from "vitest";
import {
  CODE_CHALLENGE_POLICIES,
  attemptsLeft,
  issueCode,
  judgeCode,
  loginLockoutAt,
} from "./code-challenge.js";
import {
  CONTACT_VERIFICATION_CODE_SECONDS,
  SANDBOX_CONTACT_VERIFICATION_CODE,
  SANDBOX_SCA_CODE,
  SCA_CHALLENGE_SECONDS,
  SCA_LOCKOUT_STEPS,
  SCA_MAX_ATTEMPTS,
  SCA_SUSPEND_AT_FAILED_LOGINS,
} from "./tables.js";

const at = new Date("2026-01-01T00:00:00Z");
const later = (seconds: number) => new Date(at.getTime() + seconds * 1000);

describe("one-time codes", () => {
  it("issues each kind with its own lifetime and no attempts", () => {
    expect(issueCode("SCA", at)).toEqual({ expiresAt: later(SCA_CHALLENGE_SECONDS), attempts: 0 });
    expect(issueCode("CONTACT_VERIFICATION", at).expiresAt).toEqual(
      later(CONTACT_VERIFICATION_CODE_SECONDS),
    );
  });

  it("accepts the kind's magic code until the expiry, not at it", () => {
    const issued = issueCode("SCA", at);
    expect(judgeCode("SCA", issued, SANDBOX_SCA_CODE, later(SCA_CHALLENGE_SECONDS - 1))).toEqual({
      kind: "ACCEPT",
    });
    expect(judgeCode("SCA", issued, SANDBOX_SCA_CODE, later(SCA_CHALLENGE_SECONDS))).toEqual({
      kind: "EXPIRED",
    });
    expect(
      judgeCode(
        "CONTACT_VERIFICATION",
        issueCode("CONTACT_VERIFICATION", at),
        SANDBOX_CONTACT_VERIFICATION_CODE,
        at,
      ),
    ).toEqual({ kind: "ACCEPT" });
  });

  it("counts wrong answers and spends the code at the last one", () => {
    let issued = issueCode("SCA", at);
    const left: number[] = [];
    for (let i = 0; i < SCA_MAX_ATTEMPTS; i++) {
      const judged = judgeCode("SCA", issued, "000000", at);
      if (judged.kind !== "WRONG") throw new Error(judged.kind);
      expect(judged.rejection).toMatchObject({ status: 400, errorCode: "INVALID_INPUT" });
      expect(judged.spent).toBe(i === SCA_MAX_ATTEMPTS - 1);
      left.push(judged.attemptsLeft);
      issued = { ...issued, attempts: judged.attempts };
    }
    expect(left).toEqual([4, 3, 2, 1, 0]);
    expect(judgeCode("SCA", issued, SANDBOX_SCA_CODE, at)).toEqual({ kind: "SPENT" });
    expect(attemptsLeft("SCA", 99)).toBe(0);
  });

  it("answers every kind with its magic table", () => {
    for (const policy of Object.values(CODE_CHALLENGE_POLICIES)) {
      expect(policy.table.rows.length).toBeGreaterThan(0);
    }
  });

  it("locks logins step by step, then suspends", () => {
    expect(loginLockoutAt(1)).toEqual({ kind: "NONE" });
    for (const step of SCA_LOCKOUT_STEPS) {
      expect(loginLockoutAt(step.failedAttempts)).toEqual({
        kind: "LOCKED",
        seconds: step.seconds,
      });
    }
    expect(SCA_LOCKOUT_STEPS.map((step) => step.seconds / 60)).toEqual([15, 30, 60, 1440]);
    expect(loginLockoutAt(SCA_SUSPEND_AT_FAILED_LOGINS)).toEqual({ kind: "SUSPENDED" });
    expect(loginLockoutAt(SCA_SUSPEND_AT_FAILED_LOGINS + 3)).toEqual({ kind: "SUSPENDED" });
  });
});
