/**
 * One-time codes, the one rule for every kind of them: a code is issued with an expiry, answered
 * with the kind's magic table, and spent by too many wrong answers. Strong customer authentication
 * (quote challenges, factor enrolment, login, beneficiary trust) and contact verification differ
 * only in their policy row below; the server keeps a code's expiry and attempts count and asks
 * `judgeCode` what an answer means, so no caller decides expiry or attempts by itself.
 */
import { evaluate } from "./evaluate.js";
import {
  CONTACT_VERIFICATION_CODE_SECONDS,
  CONTACT_VERIFICATION_CODE_TABLE,
  CONTACT_VERIFICATION_MAX_ATTEMPTS,
  SCA_CHALLENGE_SECONDS,
  SCA_CODE_TABLE,
  SCA_LOCKOUT_STEPS,
  SCA_MAX_ATTEMPTS,
  SCA_SUSPEND_AT_FAILED_LOGINS,
} from "./tables.js";
import type { MagicTable, Rejection } from "./types.js";

type CodeOutcome = { readonly kind: "ACCEPT" } | Rejection<400, "INVALID_INPUT">;

export interface CodeChallengePolicy {
  /** How long an issued code can be answered. */
  readonly seconds: number;
  /** Wrong answers after which the code is spent. */
  readonly maxAttempts: number;
  /** The magic table that decides whether an answer is the code. */
  readonly table: MagicTable<CodeOutcome>;
}

export const CODE_CHALLENGE_POLICIES = {
  SCA: { seconds: SCA_CHALLENGE_SECONDS, maxAttempts: SCA_MAX_ATTEMPTS, table: SCA_CODE_TABLE },
  CONTACT_VERIFICATION: {
    seconds: CONTACT_VERIFICATION_CODE_SECONDS,
    maxAttempts: CONTACT_VERIFICATION_MAX_ATTEMPTS,
    table: CONTACT_VERIFICATION_CODE_TABLE,
  },
} as const satisfies Record<string, CodeChallengePolicy>;

export type CodeChallengeKind = keyof typeof CODE_CHALLENGE_POLICIES;

/** What the server keeps of an issued code. */
export interface IssuedCode {
  readonly expiresAt: Date;
  /** Wrong answers so far. */
  readonly attempts: number;
}

/** A fresh code of this kind, issued at `at`. */
export function issueCode(kind: CodeChallengeKind, at: Date): IssuedCode {
  return {
    expiresAt: new Date(at.getTime() + CODE_CHALLENGE_POLICIES[kind].seconds * 1000),
    attempts: 0,
  };
}

/** Wrong answers the code still takes after `attempts` of them. */
export function attemptsLeft(kind: CodeChallengeKind, attempts: number): number {
  return Math.max(0, CODE_CHALLENGE_POLICIES[kind].maxAttempts - attempts);
}

export type CodeJudgement =
  | { readonly kind: "ACCEPT" }
  /** Past its expiry: no answer counts any more. */
  | { readonly kind: "EXPIRED" }
  /** Already spent by wrong answers. */
  | { readonly kind: "SPENT" }
  /**
   * A wrong answer: the server counts it (`attempts` is the count after it) and, when `spent`,
   * voids the code.
   */
  | {
      readonly kind: "WRONG";
      readonly rejection: Rejection<400, "INVALID_INPUT">;
      readonly attempts: number;
      readonly attemptsLeft: number;
      readonly spent: boolean;
    };

/** What `code`, answered at `now`, means for an issued code of this kind. */
export function judgeCode(
  kind: CodeChallengeKind,
  issued: IssuedCode,
  code: string | null | undefined,
  now: Date,
): CodeJudgement {
  const policy = CODE_CHALLENGE_POLICIES[kind];
  if (now.getTime() >= issued.expiresAt.getTime()) return { kind: "EXPIRED" };
  if (issued.attempts >= policy.maxAttempts) return { kind: "SPENT" };
  const { outcome } = evaluate(policy.table, code);
  if (outcome.kind === "ACCEPT") return { kind: "ACCEPT" };
  const attempts = issued.attempts + 1;
  return {
    kind: "WRONG",
    rejection: outcome,
    attempts,
    attemptsLeft: attemptsLeft(kind, attempts),
    spent: attempts >= policy.maxAttempts,
  };
}

/** A customer's failed-login lockout, from its cumulative failed-login count. */
export type LoginLockout =
  | { readonly kind: "NONE" }
  | { readonly kind: "LOCKED"; readonly seconds: number }
  | { readonly kind: "SUSPENDED" };

/**
 * The lockout a customer gets when its cumulative failed-login count reaches `failedAttempts`:
 * each step of SCA_LOCKOUT_STEPS locks for longer, and from SCA_SUSPEND_AT_FAILED_LOGINS on the
 * customer is suspended.
 */
export function loginLockoutAt(failedAttempts: number): LoginLockout {
  if (failedAttempts >= SCA_SUSPEND_AT_FAILED_LOGINS) return { kind: "SUSPENDED" };
  const step = SCA_LOCKOUT_STEPS.find((row) => row.failedAttempts === failedAttempts);
  return step ? { kind: "LOCKED", seconds: step.seconds } : { kind: "NONE" };
}
