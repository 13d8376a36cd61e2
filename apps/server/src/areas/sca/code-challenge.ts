/**
 * The server side of one-time codes, shared by every flow that issues one:
 * a quote's SCA challenge, contact verification, SCA factor enrolment, SCA
 * login and beneficiary trust changes. What an answer means (expired, spent,
 * right, wrong, attempts left) is the sandbox rules' `judgeCode`; this module
 * applies it: a wrong answer is counted against the very code that was read
 * (by its store, atomically, so a code issued since is never charged) and
 * answered with the kind's rejection and `details.attemptsLeft`; an expired
 * or spent code gets the caller's own error (each flow says how to start
 * again). A flow only says where its code lives.
 */
import {
  attemptsLeft,
  issueCode,
  judgeCode,
  type CodeChallengeKind,
  type IssuedCode,
} from "@payments-sandbox/sandbox-rules";
import { ApiError } from "../../errors.js";
import { newId } from "../../ids.js";
import type { Database } from "../../db/database.js";
import { one, q, run } from "../../db/query.js";
import type { SqlProgram } from "../../db/sql.js";

/** Where an issued code's wrong answers are counted. */
export interface CodeStore {
  /**
   * Adds one wrong answer to the code that was read, voiding it once
   * `spent(attempts)`; answers the count after it, or undefined when that
   * code is gone (answered, replaced or voided meanwhile).
   */
  countWrong(spent: (attempts: number) => boolean): SqlProgram<number | undefined>;
}

export interface CodeAnswer {
  kind: CodeChallengeKind;
  issued: IssuedCode;
  code: string | null | undefined;
  now: Date;
  store: CodeStore;
  /** The error for a code no answer can satisfy any more. */
  unusable: (why: "EXPIRED" | "SPENT") => ApiError;
  /** Added to a wrong answer's details (next to attemptsLeft). */
  wrongDetails?: Record<string, unknown>;
}

/**
 * Checks an answer to an issued code: returns when it is the code, throws
 * otherwise (after counting a wrong one).
 */
export async function answerCode(data: Database, answer: CodeAnswer): Promise<void> {
  const judged = judgeCode(answer.kind, answer.issued, answer.code, answer.now);
  if (judged.kind === "ACCEPT") return;
  if (judged.kind === "EXPIRED" || judged.kind === "SPENT") throw answer.unusable(judged.kind);
  const kind = answer.kind;
  const counted = await data.transaction(() =>
    answer.store.countWrong((attempts) => attemptsLeft(kind, attempts) === 0),
  );
  const { rejection } = judged;
  throw new ApiError(rejection.status, rejection.errorCode, rejection.message, {
    details: {
      attemptsLeft: attemptsLeft(kind, counted ?? Number.MAX_SAFE_INTEGER),
      ...answer.wrongDetails,
    },
  });
}

/** The store of a code kept in an ScaChallenge row: voided by deleting it. */
export function scaChallengeStore({
  id,
  platformId,
}: {
  id: string;
  platformId: string;
}): CodeStore {
  return {
    *countWrong(spent) {
      const counted = yield* one(
        q
          .updateTable("ScaChallenge")
          .set((eb) => ({ attempts: eb("attempts", "+", 1) }))
          .where("id", "=", id)
          .where("platformId", "=", platformId)
          .returning("attempts"),
      );
      if (counted && spent(counted.attempts)) {
        yield* run(
          q.deleteFrom("ScaChallenge").where("id", "=", id).where("platformId", "=", platformId),
        );
      }
      return counted?.attempts;
    },
  };
}

/** What an SCA challenge is for: a login, or a change of trust in a beneficiary. */
export interface ScaChallengeSubject {
  platformId: string;
  customerId: string;
  purpose: string;
  /** The customer for a login, the external account for a trust change. */
  subjectId: string;
  factor: string;
  webauthnChallenge: string | null;
}

/**
 * Issues an SCA challenge: one outstanding per customer, purpose and subject,
 * so starting again replaces the previous one under a new id (its wrong
 * answers forgotten).
 */
export async function replaceScaChallenge(
  data: Database,
  subject: ScaChallengeSubject,
  now: Date,
): Promise<{ id: string; expiresAt: Date }> {
  const { platformId, customerId, purpose, subjectId, ...rest } = subject;
  const challenge = {
    ...rest,
    id: newId("ScaChallenge"),
    attempts: 0,
    expiresAt: issueCode("SCA", now).expiresAt,
    createdAt: now,
  };
  await data.execute(
    q
      .insertInto("ScaChallenge")
      .values({ ...challenge, platformId, customerId, purpose, subjectId })
      .onConflict((conflict) =>
        conflict.columns(["customerId", "purpose", "subjectId"]).doUpdateSet(challenge),
      ),
  );
  return { id: challenge.id, expiresAt: challenge.expiresAt };
}
