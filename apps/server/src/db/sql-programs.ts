import type { SqlCommit, SqlProgram } from "./sql-steps.js";

// Write transactions that can run on the SQLite writer thread
// (sqlite-writer-thread.ts). A thread can be sent plain data, not a closure,
// so each such program is defined by the module that writes it, under a
// name, with that module's URL (defineSqlPrograms): the writer thread
// imports the module by its URL, once, and finds the program under the same
// name there. The data layer knows no program of its own.
//
// A call names its program by a number (the order it was defined in this
// thread), so what crosses to the thread per call is that number and the
// input. Inputs and results must survive structured cloning (plain objects,
// strings, numbers, bigints, Dates).

/** Where a program is defined: its module's URL and its name there. */
export interface SqlProgramSource {
  module: string;
  name: string;
}

/** A program as its callers hold it: run it with SqlRunner.run or Database.program. */
export interface SqlProgramRef<I, R> extends Readonly<SqlProgramSource> {
  /** Its number in this thread (see definedSqlPrograms). */
  readonly id: number;
  readonly steps: (input: I) => SqlProgram<R>;
  /** How its steps are committed (see SqlCommit); "transaction" unless defined otherwise. */
  readonly commit: (input: I) => SqlCommit;
}

type Steps = (input: never) => SqlProgram<unknown>;
type InputOf<F> = F extends (input: infer I) => SqlProgram<unknown> ? I : never;
type ResultOf<F> = F extends (input: never) => SqlProgram<infer R> ? R : never;

/** Every program defined in this thread, by id. */
const defined: SqlProgramRef<never, unknown>[] = [];
/** The same, by module and name: how the writer thread finds a program it was sent. */
const bySource = new Map<string, SqlProgramRef<never, unknown>>();
/** A module's URL may carry a query (a loader's); the same file is the same module here. */
const sourceKey = (source: SqlProgramSource) =>
  `${source.name} ${source.module.replace(/[?#].*$/, "")}`;

const inTransaction = (): SqlCommit => "transaction";

/**
 * Defines the programs of the module at `moduleUrl` (its `import.meta.url`),
 * by name, each with how it is committed when not in one transaction
 * (`commits`). Call it when the module loads: the writer thread loads the
 * module to define them there too. Returns each program's typed handle.
 */
export function defineSqlPrograms<P extends Record<string, Steps>>(
  moduleUrl: string,
  programs: P,
  commits: { readonly [K in keyof P]?: (input: InputOf<P[K]>) => SqlCommit } = {},
): { readonly [K in keyof P]: SqlProgramRef<InputOf<P[K]>, ResultOf<P[K]>> } {
  const refs: Record<string, SqlProgramRef<never, unknown>> = {};
  const commitOf = commits as Readonly<Record<string, ((input: never) => SqlCommit) | undefined>>;
  for (const [name, steps] of Object.entries(programs)) {
    const ref: SqlProgramRef<never, unknown> = {
      module: moduleUrl,
      name,
      id: defined.length,
      steps,
      commit: commitOf[name] ?? inTransaction,
    };
    defined.push(ref);
    bySource.set(sourceKey(ref), ref);
    refs[name] = ref;
  }
  return refs as { readonly [K in keyof P]: SqlProgramRef<InputOf<P[K]>, ResultOf<P[K]>> };
}

/** Where each program defined so far is, by id: what a writer thread is told. */
export function definedSqlPrograms(): SqlProgramSource[] {
  return defined.map(({ module, name }) => ({ module, name }));
}

/**
 * In the writer thread: the programs of the thread that started it, by their
 * ids there. Each module is imported once, as soon as its programs are
 * learnt; calls that arrive while an import is under way wait for it, so
 * calls still run in the order they came.
 */
export class SqlProgramTable {
  private readonly sources: SqlProgramSource[] = [];
  private readonly programs: (SqlProgramRef<unknown, unknown> | undefined)[] = [];
  private readonly failures = new Map<number, unknown>();
  private loading: Promise<void> | undefined;

  /** Learns the programs not known yet (`sources` by id) and starts importing their modules. */
  learn(sources: readonly SqlProgramSource[]): void {
    const imports: Promise<void>[] = [];
    sources.forEach((source, id) => {
      if (this.sources[id] !== undefined) return;
      this.sources[id] = source;
      imports.push(
        import(source.module)
          .then(() => {
            const program = bySource.get(sourceKey(source));
            if (program === undefined) {
              throw new Error(`${source.module} defines no SQL program ${source.name}`);
            }
            this.programs[id] = program as SqlProgramRef<unknown, unknown>;
          })
          // Reported to the calls of this program; the others go on.
          .catch((err: unknown) => {
            this.failures.set(id, err);
          }),
      );
    });
    if (imports.length === 0) return;
    const loading: Promise<void> = Promise.all([this.loading, ...imports]).then(() => {
      if (this.loading === loading) this.loading = undefined;
    });
    this.loading = loading;
  }

  /** `use(program)` for the program of `id`, once it is loaded. */
  with<T>(id: number, use: (program: SqlProgramRef<unknown, unknown>) => Promise<T>): Promise<T> {
    if (this.loading !== undefined) return this.loading.then(() => this.with(id, use));
    const program = this.programs[id];
    if (program !== undefined) return use(program);
    const failure = this.failures.get(id) ?? new Error(`no SQL program ${id} was defined`);
    return Promise.reject(failure instanceof Error ? failure : new Error(String(failure)));
  }
}
