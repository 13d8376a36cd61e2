// Generates src/generated/api.ts (or the file given) from openapi.yaml with
// openapi-typescript, after one change to a copy of the document.
//
// An object schema whose anyOf branches only say which of its own properties
// must be present (the live contract's "a `code`, or `passkeyAssertion` with
// `origin`") comes out of openapi-typescript as `{ ... } | unknown`, which is
// `unknown`, and no handler or caller could use it. Such an anyOf is dropped
// from the copy the types are made from: the object keeps its type, and the
// request validator still enforces the anyOf, which openapi.yaml keeps.
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript";
import { parse } from "yaml";

const clientDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const source = join(clientDir, "..", "..", "openapi.yaml");
const output = resolve(clientDir, process.argv[2] ?? "src/generated/api.ts");

/** True for `anyOf: [{ required: [...] }, ...]` naming only properties the schema has. */
function onlyNarrowsRequired(schema) {
  const properties = schema.properties ?? {};
  return (
    Array.isArray(schema.anyOf) &&
    schema.anyOf.every(
      (branch) =>
        Object.keys(branch).length === 1 &&
        Array.isArray(branch.required) &&
        branch.required.every((name) => name in properties),
    )
  );
}

function withoutNarrowingAnyOf(node) {
  if (Array.isArray(node)) return node.map(withoutNarrowingAnyOf);
  if (node === null || typeof node !== "object") return node;
  const copy = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "anyOf" && onlyNarrowsRequired(node)) continue;
    copy[key] = withoutNarrowingAnyOf(value);
  }
  return copy;
}

const document = withoutNarrowingAnyOf(parse(readFileSync(source, "utf8")));
const ast = await openapiTS(document, { defaultNonNullable: false, silent: true });
writeFileSync(output, COMMENT_HEADER + astToString(ast));
