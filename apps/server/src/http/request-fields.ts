import type { ApiDocument } from "./api-document.js";

// What a request may contain, read from openapi.yaml, so that a 400 for an
// unknown field can name the field the caller probably meant.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The names a request may use, for one operation. */
export interface RequestFields {
  /** The property names allowed at a body location (dot path, "" for the top), in any branch. */
  body(path: string): string[];
  /** The query parameter names. */
  query: string[];
}

/** The known fields of the operation `method path` of `doc`. */
export function requestFields(doc: ApiDocument, path: string, method: string): RequestFields {
  const item = doc.paths[path] ?? {};
  const operation = item[method.toLowerCase()];
  const resolve = (value: Json | undefined, hops = 0): Json | undefined => {
    if (isObject(value) && typeof value.$ref === "string" && hops < 20) {
      const [, , kind, name] = value.$ref.split("/");
      return resolve(doc.components?.[kind ?? ""]?.[name ?? ""], hops + 1);
    }
    return value;
  };
  const parameters = [
    ...(Array.isArray(item.parameters) ? item.parameters : []),
    ...(isObject(operation) && Array.isArray(operation.parameters) ? operation.parameters : []),
  ].map((p) => resolve(p));
  const query = parameters.flatMap((p) =>
    isObject(p) && p.in === "query" && typeof p.name === "string" ? [p.name] : [],
  );
  const requestBody = isObject(operation) ? resolve(operation.requestBody) : undefined;
  const content = isObject(requestBody) && isObject(requestBody.content) ? requestBody.content : {};
  const roots = Object.values(content).flatMap((media) =>
    isObject(media) && media.schema !== undefined ? [media.schema] : [],
  );

  /** Every schema a value at this schema may have to match (through $ref, allOf, oneOf, anyOf). */
  const branches = (schema: Json | undefined, seen = new Set<Json>()): JsonObject[] => {
    const node = resolve(schema);
    if (!isObject(node) || seen.has(node)) return [];
    seen.add(node);
    const nested = ["allOf", "oneOf", "anyOf"].flatMap((key) => {
      const list = node[key];
      return Array.isArray(list) ? list.flatMap((entry) => branches(entry, seen)) : [];
    });
    return [node, ...nested];
  };

  return {
    query,
    body(at) {
      let schemas = roots.flatMap((root) => branches(root));
      for (const segment of at === "" ? [] : at.split(".")) {
        schemas = schemas.flatMap((schema) => {
          if (/^\d+$/.test(segment)) return branches(schema.items);
          const properties = isObject(schema.properties) ? schema.properties : {};
          return segment in properties ? branches(properties[segment]) : [];
        });
      }
      const names = schemas.flatMap((schema) =>
        isObject(schema.properties) ? Object.keys(schema.properties) : [],
      );
      return [...new Set(names)];
    },
  };
}

/** Edit distance (insertions, deletions, substitutions, adjacent swaps), case-insensitive. */
function distance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const d: number[][] = Array.from({ length: s.length + 1 }, (_, i) =>
    Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) {
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = best;
    }
  }
  return d[s.length]![t.length]!;
}

/** The known name closest to `name`, if one is close enough to be a typo of it. */
export function nearest(name: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const d = distance(name, candidate);
    if (best === undefined || d < best.distance) best = { name: candidate, distance: d };
  }
  const allowed = Math.max(2, Math.floor(name.length / 3));
  return best !== undefined && best.distance <= allowed ? best.name : undefined;
}
