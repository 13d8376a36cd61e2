import { createRequire } from "node:module";

// express-openapi-validator 5.6 finds the operation of a request by trying
// the path pattern of every documented route, in document order, on every
// request (openapi.metadata.js, lookupRoute): it compiles each pattern again
// and runs it. With some 55 operations that was the most expensive single
// function of a request, and routes late in openapi.yaml paid the most.
//
// Two fixes, both invisible to the validator's own logic:
// - path-to-regexp's pathToRegexp (the validator's copy) is memoised: the
//   patterns never change, and callers only read { regexp, keys } (the regexp
//   has no global flag, so sharing it is safe). Express's router uses `match`
//   and is not affected.
// - lookupRoute is shown only the routes that could match the request: those
//   with as many path segments, whose literal segments are equal to the
//   request's. That is a pre-filter; the validator still runs its own pattern
//   on each candidate, in document order, so what it matches is unchanged.

type PathToRegexp = (path: unknown, options?: unknown) => unknown;

/** The parts of the validator's OpenApiContext that lookupRoute reads. */
interface OpenApiContextLike {
  expressRouteMap: Record<string, unknown>;
  useRequestUrl?: boolean;
}
type Middleware = (req: RequestLike, res: unknown, next: unknown) => unknown;
type ApplyMetadata = (context: OpenApiContextLike, responseApiDoc: unknown) => Middleware;
interface RequestLike {
  url: string;
  originalUrl: string;
}

let installed = false;

export function memoiseValidatorRouteMatching(): void {
  if (installed) return;
  installed = true;
  const here = createRequire(import.meta.url);
  const fromValidator = createRequire(here.resolve("express-openapi-validator"));
  memoisePathToRegexp(fromValidator("path-to-regexp") as { pathToRegexp: PathToRegexp });
  // middlewares/index.js re-exports this through a getter that reads the
  // module's export at each call, so replacing the export is enough.
  const metadata = fromValidator("./middlewares/openapi.metadata") as {
    applyOpenApiMetadata: ApplyMetadata;
  };
  const original = metadata.applyOpenApiMetadata;
  metadata.applyOpenApiMetadata = (context, responseApiDoc) => {
    const narrowed = narrowedRoutes(context);
    const middleware = original(narrowed.view, responseApiDoc);
    return (req, res, next) => {
      narrowed.select((context.useRequestUrl ? req.url : req.originalUrl).split("?")[0] ?? "");
      try {
        return middleware(req, res, next);
      } finally {
        narrowed.clear();
      }
    };
  };
}

function memoisePathToRegexp(module: { pathToRegexp: PathToRegexp }): void {
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

/** A route's segments: the literal ones lower-cased, null where a parameter (or anything else) goes. */
function segmentsOf(route: string): (string | null)[] {
  return route
    .split("/")
    .slice(1)
    .map((s) => (/^[A-Za-z0-9._~-]+$/.test(s) ? s.toLowerCase() : null));
}

/** A path's segments, lower-cased (routing is case-insensitive), one trailing slash ignored. */
function requestSegments(path: string): string[] {
  const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  return trimmed
    .split("/")
    .slice(1)
    .map((s) => s.toLowerCase());
}

/**
 * A view of the validator's context whose `expressRouteMap`, read once after
 * `select(path)`, holds only the candidate routes for that path (in document
 * order); every other read sees the full map.
 */
export function narrowedRoutes(context: OpenApiContextLike) {
  const full = context.expressRouteMap;
  const routes = Object.keys(full).map((route) => ({ route, segments: segmentsOf(route) }));
  const bySubset = new Map<string, Record<string, unknown>>();
  let selected: Record<string, unknown> | undefined;

  const view = Object.create(context, {
    expressRouteMap: {
      get() {
        const map = selected ?? full;
        selected = undefined;
        return map;
      },
    },
  }) as OpenApiContextLike;

  return {
    view,
    select(path: string) {
      const parts = requestSegments(path);
      const candidates = routes.filter(
        ({ segments }) =>
          segments.length === parts.length &&
          segments.every((s, i) => s === null || s === parts[i]),
      );
      const key = candidates.map((c) => c.route).join("\n");
      let subset = bySubset.get(key);
      if (subset === undefined) {
        subset = Object.fromEntries(candidates.map(({ route }) => [route, full[route]]));
        bySubset.set(key, subset);
      }
      selected = subset;
    },
    clear() {
      selected = undefined;
    },
  };
}
