import { usageError } from "../../context.js";

// `--override customer.fullName="Ada Smith001"`: a value put into the request
// body of one object a flow creates, by a dotted path whose first segment
// names that object. The value is read as JSON when it is JSON (5000, true,
// null, "007", {"a":1}) and as text otherwise, so a name needs no quotes but a
// number-looking text does ('--override externalAccount.accountInfo.accountNumber="000123"').

export interface Override {
  /** The object (or flow parameter) it applies to: the path's first segment. */
  target: string;
  /** The path inside that object's request body (empty for a flow parameter). */
  path: string[];
  value: unknown;
  /** As the user typed it, for messages. */
  text: string;
}

export function parseOverride(text: string): Override {
  const eq = text.indexOf("=");
  const key = eq < 0 ? "" : text.slice(0, eq);
  const segments = key.split(".");
  if (eq < 0 || segments.some((segment) => segment === "")) {
    throw usageError(
      `--override "${text}" is not path=value (e.g. --override customer.fullName="Ada Smith001")`,
    );
  }
  const raw = text.slice(eq + 1);
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    // Not JSON: the text itself.
  }
  return { target: segments[0]!, path: segments.slice(1), value, text };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The overrides of one `trigger` run, checked against what its flow creates. */
export class Overrides {
  private readonly byTarget = new Map<string, Override[]>();

  constructor(
    overrides: readonly Override[],
    /** What the flow accepts: the objects it creates and its parameters (no path). */
    accepted: { objects: readonly string[]; parameters: readonly string[] },
    flowName: string,
  ) {
    const names = [...accepted.objects, ...accepted.parameters];
    for (const override of overrides) {
      const isObject = accepted.objects.includes(override.target);
      const isParameter = accepted.parameters.includes(override.target);
      if (!isObject && !isParameter) {
        throw usageError(
          `--override ${override.text}: ${flowName} creates no "${override.target}"; it accepts ${names.length > 0 ? names.join(", ") : "no overrides"} (see trigger --list)`,
        );
      }
      if (isObject && override.path.length === 0) {
        throw usageError(
          `--override ${override.text}: name a field of ${override.target} (e.g. ${override.target}.<field>=value)`,
        );
      }
      if (isParameter && override.path.length > 0) {
        throw usageError(`--override ${override.text}: ${override.target} has no fields`);
      }
      this.byTarget.set(override.target, [...(this.byTarget.get(override.target) ?? []), override]);
    }
  }

  /** A flow parameter's override (the last one given), if any. */
  parameter(name: string): unknown {
    return this.byTarget.get(name)?.at(-1)?.value;
  }

  /** The request body of `target` with its overrides put in (a copy; `body` is not changed). */
  apply<T extends object>(target: string, body: T): T {
    const copy = structuredClone(body) as Record<string, unknown>;
    for (const { path, value, text } of this.byTarget.get(target) ?? []) {
      let node = copy;
      for (const segment of path.slice(0, -1)) {
        const next = node[segment];
        if (next === undefined) node[segment] = {};
        else if (!isRecord(next)) {
          throw usageError(`--override ${text}: ${segment} is not an object in ${target}`);
        }
        node = node[segment] as Record<string, unknown>;
      }
      node[path.at(-1)!] = value;
    }
    return copy as T;
  }
}
