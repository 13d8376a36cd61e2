import {
  authorizationCommit,
  authorizationSteps,
} from "../areas/card-transactions/authorization.js";
import {
  claimDueWebhookEvents,
  recordWebhookAttempts,
  releaseAbandonedWebhookEvents,
} from "../events/outbox-store.js";
import type { SqlCommit, SqlProgram } from "./sql.js";

// The direct-SQL write transactions, by name, so that they can run on the
// SQLite writer thread (sqlite-writer-thread.ts): a thread can be sent a name
// and plain data, not a closure. Inputs and results must survive structured
// cloning (plain objects, strings, numbers, bigints, Dates).

export const sqlPrograms = {
  cardAuthorization: authorizationSteps,
  claimDueWebhookEvents,
  recordWebhookAttempts,
  releaseAbandonedWebhookEvents,
};

/** How each program's steps are committed (see SqlCommit); a transaction unless named here. */
const commits: { [N in keyof typeof sqlPrograms]?: (input: SqlProgramInput<N>) => SqlCommit } = {
  cardAuthorization: authorizationCommit,
};

export type SqlProgramName = keyof typeof sqlPrograms;
export type SqlProgramInput<N extends SqlProgramName> = Parameters<(typeof sqlPrograms)[N]>[0];
export type SqlProgramResult<N extends SqlProgramName> =
  ReturnType<(typeof sqlPrograms)[N]> extends SqlProgram<infer R> ? R : never;

export function startProgram<N extends SqlProgramName>(
  name: N,
  input: SqlProgramInput<N>,
): SqlProgram<SqlProgramResult<N>> {
  const program = sqlPrograms[name] as (input: SqlProgramInput<N>) => SqlProgram<unknown>;
  return program(input) as SqlProgram<SqlProgramResult<N>>;
}

export function commitOf<N extends SqlProgramName>(name: N, input: SqlProgramInput<N>): SqlCommit {
  const commit = commits[name] as ((input: SqlProgramInput<N>) => SqlCommit) | undefined;
  return commit ? commit(input) : "transaction";
}
