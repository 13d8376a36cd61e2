import type { Request } from "express";
import type { ApiDocument } from "./api-document.js";

// An array query parameter arrives in one of two forms: repeated
// (`?c=EUR&c=MXN`, the contract's `style: form, explode: true`) or
// comma-joined (`?c=EUR,MXN`), which is what production's SDK sends and
// production accepts. The validator knows only the first, and read the second
// as one value, `"EUR,MXN"`, that matched nothing. Both forms are read here,
// for every array query parameter of the document, before validation.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

function isObject(value: unknown): value is { [key: string]: Json } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A parameter object, following one `#/components/parameters/…` reference. */
function parameterOf(doc: ApiDocument, value: Json): { [key: string]: Json } | undefined {
  if (isObject(value) && typeof value.$ref === "string") {
    const name = value.$ref.split("/").pop() ?? "";
    const target = doc.components?.parameters?.[name];
    return isObject(target) ? target : undefined;
  }
  return isObject(value) ? value : undefined;
}

function isArraySchema(doc: ApiDocument, schema: Json | undefined): boolean {
  let node = schema;
  if (isObject(node) && typeof node.$ref === "string") {
    node = doc.components?.schemas?.[node.$ref.split("/").pop() ?? ""];
  }
  return isObject(node) && node.type === "array";
}

/** The names of `path`'s array query parameters, by upper-case method. */
export function arrayQueryParameters(doc: ApiDocument, path: string): Map<string, string[]> {
  const item = doc.paths[path] ?? {};
  const shared = Array.isArray(item.parameters) ? item.parameters : [];
  const found = new Map<string, string[]>();
  for (const method of METHODS) {
    const operation = item[method];
    if (!isObject(operation)) continue;
    const own = Array.isArray(operation.parameters) ? operation.parameters : [];
    const names = [...shared, ...own]
      .map((value) => parameterOf(doc, value))
      .filter((p) => p?.in === "query" && isArraySchema(doc, p.schema))
      .map((p) => String(p!.name));
    if (names.length > 0) found.set(method.toUpperCase(), names);
  }
  return found;
}

/**
 * The document as the validator is given it: its array query parameters
 * take a raw `,` (as they take `%2C`), which the validator otherwise refuses
 * as a reserved character. Changes `doc` in place: it is given a copy.
 */
export function withCommaJoinedArrays(doc: ApiDocument): ApiDocument {
  const visit = (list: Json | undefined): void => {
    if (!Array.isArray(list)) return;
    for (const value of list) {
      const parameter = parameterOf(doc, value);
      if (parameter?.in === "query" && isArraySchema(doc, parameter.schema)) {
        parameter.allowReserved = true;
      }
    }
  };
  for (const item of Object.values(doc.paths)) {
    visit(item.parameters);
    for (const method of METHODS) {
      const operation = item[method];
      if (isObject(operation)) visit(operation.parameters);
    }
  }
  return doc;
}

/**
 * Splits every comma-joined value of the named query parameters, so that
 * `?c=EUR,MXN`, `?c=EUR%2CMXN` and `?c=EUR&c=MXN` all read `["EUR", "MXN"]`.
 * Express 5 parses `req.query` afresh on each read; the result is kept as
 * the request's own value, which the validator and the handler then read.
 */
export function splitCommaJoinedQuery(req: Request, names: readonly string[]): void {
  const query = req.query as Record<string, unknown>;
  let changed = false;
  for (const name of names) {
    const value = query[name];
    const values = Array.isArray(value) ? value : value === undefined ? [] : [value];
    if (!values.some((v) => typeof v === "string" && v.includes(","))) continue;
    query[name] = values.flatMap((v) =>
      typeof v === "string" ? v.split(",").filter((part) => part !== "") : [v],
    );
    changed = true;
  }
  if (changed) {
    Object.defineProperty(req, "query", {
      value: query,
      writable: true,
      configurable: true,
      enumerable: true,
    });
  }
}
