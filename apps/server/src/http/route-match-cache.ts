import { createRequire } from "node:module";

// express-openapi-validator 5.6 finds the operation of a request by compiling
// the path pattern of every documented route, in document order, on every
// request (openapi.metadata.js, lookupRoute), which makes routes late in
// openapi.yaml measurably slower. The compiled patterns never change, so this
// memoises path-to-regexp's pathToRegexp for the validator's copy of the
// module. Callers only read the result ({ regexp, keys }; the regexp has no
// global flag, so sharing it is safe). Express's router uses `match` instead
// and is not affected.

type PathToRegexp = (path: unknown, options?: unknown) => unknown;

let installed = false;

export function memoiseValidatorRouteMatching(): void {
  if (installed) return;
  installed = true;
  const here = createRequire(import.meta.url);
  const fromValidator = createRequire(here.resolve("express-openapi-validator"));
  const module = fromValidator("path-to-regexp") as { pathToRegexp: PathToRegexp };
  const original = module.pathToRegexp;
  // The validator passes only { sensitive, strict }: key on the path and those.
  const cache = [new Map<string, unknown>(), new Map(), new Map(), new Map()];
  module.pathToRegexp = (path, options) => {
    const o = (options ?? {}) as Record<string, unknown>;
    if (typeof path !== "string") return original(path, options);
    for (const key in o) {
      if (key !== "sensitive" && key !== "strict") return original(path, options);
    }
    const byPath = cache[(o.sensitive ? 1 : 0) + (o.strict ? 2 : 0)]!;
    let compiled = byPath.get(path);
    if (compiled === undefined) {
      compiled = original(path, options);
      byPath.set(path, compiled);
    }
    return compiled;
  };
}
