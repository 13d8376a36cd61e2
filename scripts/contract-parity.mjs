#!/usr/bin/env node
// Compares the sandbox's openapi.yaml with the live service's published
// contract, fact by fact: which operations exist (method and path), their
// operation ids, parameters, security, request and response shapes (property
// names, types, formats, enums, required fields, error codes) and status
// codes, and the webhook event types. A partner's integration moves from the
// sandbox to production by changing the host only if these agree.
//
// The live contract's facts are kept in contract/live-facts.json (names,
// types and codes only, no text), refreshed from the reference document when
// it is at hand:
//
//   node scripts/contract-parity.mjs                 # check (CI)
//   node scripts/contract-parity.mjs --refresh       # rewrite the facts from the reference
//   node scripts/contract-parity.mjs --list          # print every difference, allowed or not
//   node scripts/contract-parity.mjs --shared DIR    # where spec/, FACTS.md and reference/ are
//
// Every difference must be listed in contract/parity-allowlist.yaml with its
// reason and the line of the spec or FACTS.md it rests on, quoted; an unlisted
// difference fails, and so do an entry that rests on nothing and one that no
// longer matches anything, so the list only ever shrinks to what is meant.
// The one name the seed changes (the wallet-signature header) is compared
// under production's name; every other name must be production's.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import YAML from "yaml";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const { values: args } = parseArgs({
  options: {
    refresh: { type: "boolean", default: false },
    list: { type: "boolean", default: false },
    // Where the spec, FACTS.md and the reference document are kept.
    shared: { type: "string", default: join(root, "..", "shared") },
    reference: { type: "string" },
  },
});
args.reference ??= join(args.shared, "reference", "live-api", "openapi.yaml");
/** The documents an allowed difference may rest on, by the name an entry gives them. */
const GROUNDS = {
  "service-spec.md": join(args.shared, "spec", "service-spec.md"),
  "FACTS.md": join(args.shared, "FACTS.md"),
};
const FACTS = join(root, "contract", "live-facts.json");
const ALLOWLIST = join(root, "contract", "parity-allowlist.yaml");
const METHODS = ["get", "put", "post", "patch", "delete"];
const MAX_DEPTH = 10;

/**
 * The seed renames exactly one name: production's wallet-signature header
 * `Grid-Wallet-Signature` is `Service-Wallet-Signature` in the spec. Ours is
 * read under production's name, so every other name compares as written (and
 * a document that also accepts production's name states the same fact twice).
 */
const SEED_HEADER = "Service-Wallet-Signature";
const LIVE_HEADER = "Grid-Wallet-Signature";
const headerName = (name) =>
  name.toLowerCase() === SEED_HEADER.toLowerCase() ? LIVE_HEADER : name;

/** `/cards/{id}/x` and `/cards/{cardId}/x` are the same URL. */
const urlShape = (path) => path.replace(/\{[^}]+\}/g, "{}");

function deref(doc, node) {
  let name;
  while (node && typeof node.$ref === "string") {
    name = node.$ref.split("/").pop();
    node = node.$ref
      .slice(2)
      .split("/")
      .reduce((at, key) => at?.[key.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
  }
  return { node: node ?? {}, name };
}

/** Error codes: an enum, or (as the live contract writes them) the rows of a table in the description. */
function codesOf(schema) {
  if (Array.isArray(schema.enum)) return schema.enum;
  const rows = [...String(schema.description ?? "").matchAll(/^\|\s*([A-Z][A-Z0-9_]+)\s*\|/gm)];
  return rows.length > 0 ? rows.map((row) => row[1]) : undefined;
}

function typeOf(schema) {
  const types = Array.isArray(schema.type) ? [...schema.type] : schema.type ? [schema.type] : [];
  if (schema.nullable === true) types.push("null");
  if (types.length === 0) {
    if (schema.properties) types.push("object");
    else if (schema.items) types.push("array");
  }
  const format = schema.format ? `(${schema.format})` : "";
  return types.length > 0 ? [...new Set(types)].sort().join("|") + format : "any";
}

/** The values a branch (with its allOf bases) fixes for a property: its enum or const. */
function fixedValues(doc, branch, property, depth = 0) {
  const { node } = deref(doc, branch);
  const own = deref(doc, node.properties?.[property] ?? {}).node;
  const values = own.const !== undefined ? [own.const] : own.enum;
  if (values) return values.map(String);
  if (depth > MAX_DEPTH) return undefined;
  // The last allOf part refines the bases before it.
  for (const part of [...(node.allOf ?? [])].reverse()) {
    const found = fixedValues(doc, part, property, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * A name for each branch of a union that both documents give it alike: the
 * discriminator's values (declared, or else the one property every branch
 * fixes), else the fields the branch requires, else its position.
 */
function branchLabels(doc, schema, branches) {
  const { propertyName, mapping } = schema.discriminator ?? {};
  if (propertyName && mapping) {
    const keys = branches.map((branch) =>
      Object.keys(mapping)
        .filter((key) => mapping[key] === branch.$ref)
        .sort(),
    );
    if (keys.every((k) => k.length > 0)) return keys.map((k) => `${propertyName}=${k.join("|")}`);
  }
  const candidates = [];
  if (propertyName) candidates.push(propertyName);
  const first = branches[0] && deref(doc, branches[0]).node;
  for (const key of Object.keys(first?.properties ?? {})) candidates.push(key);
  for (const property of candidates) {
    const values = branches.map((branch) => fixedValues(doc, branch, property));
    if (values.every((v) => v !== undefined)) {
      return values.map((v) => `${property}=${[...v].sort().join("|")}`);
    }
  }
  return branches.map((branch, i) => {
    const { node } = deref(doc, branch);
    const onlyRequired = node.required && Object.keys(node).every((k) => k === "required");
    return onlyRequired ? `required=${[...node.required].sort().join(",")}` : `#${i + 1}`;
  });
}

/** The schema as lines `path: type [enum …]`, with `path: required` for required properties. */
function flatten(doc, input, path, out, stack = [], depth = 0) {
  const { node: schema, name } = deref(doc, input);
  if (name !== undefined && stack.includes(name)) {
    out.add(`${path}: recursive`);
    return;
  }
  const inner = name === undefined ? stack : [...stack, name];
  if (depth > MAX_DEPTH) return;

  // Bases first: what the schema says itself refines them.
  const parts = [...(schema.allOf ?? []).map((part) => deref(doc, part).node), schema];
  const properties = {};
  const required = new Set();
  let enumValues;
  let type = "any";
  for (const part of parts) {
    Object.assign(properties, part.properties ?? {});
    for (const key of part.required ?? []) required.add(key);
    const t = typeOf(part);
    if (t !== "any") type = t;
    const values = part.const !== undefined ? [part.const] : part.enum;
    if (values) enumValues = values;
  }
  // `oneOf: [X, {type: null}]` is X, nullable: the same fact as `type: [X, null]`.
  let branches = [...(schema.oneOf ?? []), ...(schema.anyOf ?? [])];
  const isNull = (branch) => deref(doc, branch).node.type === "null";
  const nullable = branches.some(isNull);
  branches = branches.filter((branch) => !isNull(branch));
  if (nullable && branches.length === 1 && type === "any" && Object.keys(properties).length === 0) {
    const only = deref(doc, branches[0]).node;
    flatten(doc, { ...only, type: [...[only.type ?? []].flat(), "null"] }, path, out, inner, depth);
    return;
  }
  if (branches.length > 0 && type === "any" && Object.keys(properties).length === 0) type = "union";
  if (nullable && type !== "any" && !type.split(/[|(]/).includes("null")) type = `${type}|null`;
  if (type === "any" && Object.keys(properties).length > 0) type = "object";
  const last = path.split(".").pop();
  if (last === "code") {
    // Error codes one per line: a code added or missing is one difference.
    for (const code of enumValues ?? codesOf(schema) ?? []) out.add(`${path}: code ${code}`);
    out.add(`${path}: ${type}`);
  } else {
    const values = enumValues ? [...enumValues].map(String).sort() : [];
    const enumText = enumValues ? ` enum ${values.join("|")}` : "";
    out.add(`${path}: ${type}${enumText}`);
  }

  for (const [key, sub] of Object.entries(properties)) {
    if (required.has(key)) out.add(`${path}.${key}: required`);
    flatten(doc, sub, `${path}.${key}`, out, inner, depth + 1);
  }
  for (const part of parts) {
    if (part.items) flatten(doc, part.items, `${path}[]`, out, inner, depth + 1);
    if (part.additionalProperties && typeof part.additionalProperties === "object") {
      flatten(doc, part.additionalProperties, `${path}{}`, out, inner, depth + 1);
    }
  }
  // Each branch on its own path, so one branch's required fields are never
  // read as another's.
  const labels = branchLabels(doc, schema, branches);
  for (const [i, branch] of branches.entries()) {
    flatten(doc, branch, `${path}<${labels[i]}>`, out, inner, depth + 1);
  }
  if (schema.discriminator?.propertyName) {
    const keys = Object.keys(schema.discriminator.mapping ?? {}).sort();
    out.add(`${path}: discriminator ${schema.discriminator.propertyName} ${keys.join("|")}`);
  }
}

/** Facts of one operation, as sorted lines. */
function operationFacts(doc, path, pathItem, method) {
  const op = pathItem[method];
  const out = new Set();
  out.add(`operationId ${op.operationId}`);
  out.add(`path ${path}`);
  const security = op.security ?? doc.security ?? [];
  out.add(
    `security ${
      security
        .flatMap((s) => Object.keys(s))
        .sort()
        .join("|") || "none"
    }`,
  );
  const params = [...(pathItem.parameters ?? []), ...(op.parameters ?? [])].map(
    (p) => deref(doc, p).node,
  );
  for (const param of params) {
    const where = `param ${param.in} ${param.in === "header" ? headerName(param.name) : param.name}`;
    if (param.required) out.add(`${where}: required`);
    flatten(doc, param.schema ?? {}, where, out);
  }
  if (op.requestBody) {
    const body = deref(doc, op.requestBody).node;
    if (body.required) out.add("request: required");
    for (const [type, media] of Object.entries(body.content ?? {})) {
      flatten(doc, media.schema ?? {}, `request ${type}`, out);
    }
  }
  for (const [status, response] of Object.entries(op.responses ?? {})) {
    const res = deref(doc, response).node;
    out.add(`response ${status}`);
    for (const header of Object.keys(res.headers ?? {})) {
      out.add(`response ${status} header ${header}`);
    }
    for (const [type, media] of Object.entries(res.content ?? {})) {
      flatten(doc, media.schema ?? {}, `response ${status} ${type}`, out);
    }
  }
  return [...out].sort();
}

/** Event types a webhook body can carry: the enum of its top-level `type`. */
function webhookTypes(doc) {
  const types = new Set();
  for (const item of Object.values(doc.webhooks ?? {})) {
    for (const method of METHODS) {
      const body = item[method]?.requestBody;
      if (!body) continue;
      const content = deref(doc, body).node.content ?? {};
      for (const media of Object.values(content)) {
        const lines = new Set();
        flatten(doc, media.schema ?? {}, "body", lines);
        for (const line of lines) {
          const match = line.match(/^body\.type: string enum (.+)$/);
          if (match) for (const type of match[1].split("|")) types.add(type);
        }
      }
    }
  }
  return [...types].sort();
}

function factsOf(doc) {
  const operations = {};
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      if (!item[method]) continue;
      operations[`${method.toUpperCase()} ${urlShape(path)}`] = {
        sandboxOnly: item[method]["x-sandbox-only"] === true,
        facts: operationFacts(doc, path, item, method),
      };
    }
  }
  const signature = Object.values(doc.components?.securitySchemes ?? {}).find(
    (scheme) => scheme.type === "apiKey" && scheme.in === "header",
  );
  return {
    operations,
    webhookTypes: webhookTypes(doc),
    webhookSignatureHeader: signature ? signature.name : null,
  };
}

/**
 * Production's document as a validator reads it: paths, operations,
 * parameters, bodies and schemas, with every word of prose left out. Request
 * examples stay, for the test that replays them through the sandbox.
 */
const PROSE = new Set(["description", "summary", "title", "externalDocs", "tags", "info"]);
function validationDocument(doc) {
  // keep: "none"; "media" (a request body: its media types' examples, not
  // its schema's); "all" (a parameter: its examples and its schema's).
  const strip = (node, keep) => {
    if (Array.isArray(node)) return node.map((item) => strip(item, keep === "all" ? keep : "none"));
    if (node === null || typeof node !== "object") return node;
    const out = {};
    for (const [key, value] of Object.entries(node)) {
      if (PROSE.has(key) && (typeof value !== "object" || node === doc)) continue;
      const isExample = key === "example" || key === "examples";
      if (isExample && keep === "none") continue;
      let inner = keep === "all" ? "all" : "none";
      if (key === "parameters") inner = "all";
      else if (key === "requestBody" || key === "requestBodies") inner = "media";
      else if (keep === "media" && key !== "schema") inner = "media";
      out[key] = isExample ? value : strip(value, inner);
    }
    return out;
  };
  const { openapi, paths, components, webhooks, servers } = doc;
  return strip({ openapi, servers, paths, components, webhooks }, "none");
}
const SCHEMAS = join(root, "contract", "live-contract.json");

const load = (file) => YAML.parse(readFileSync(file, "utf8"), { maxAliasCount: -1 });

if (args.refresh) {
  if (!existsSync(args.reference)) {
    console.error(`No reference document at ${args.reference}`);
    process.exit(1);
  }
  const live = factsOf(load(args.reference));
  for (const op of Object.values(live.operations)) delete op.sandboxOnly;
  writeFileSync(FACTS, `${JSON.stringify(live, null, 1)}\n`);
  writeFileSync(SCHEMAS, `${JSON.stringify(validationDocument(load(args.reference)))}\n`);
  console.log(`Wrote ${Object.keys(live.operations).length} operations' facts to ${FACTS}`);
  process.exit(0);
}

const live = JSON.parse(readFileSync(FACTS, "utf8"));
if (existsSync(args.reference)) {
  const fresh = factsOf(load(args.reference));
  for (const op of Object.values(fresh.operations)) delete op.sandboxOnly;
  const schemas = `${JSON.stringify(validationDocument(load(args.reference)))}\n`;
  if (
    JSON.stringify(fresh) !== JSON.stringify(live) ||
    !existsSync(SCHEMAS) ||
    readFileSync(SCHEMAS, "utf8") !== schemas
  ) {
    console.error(
      "contract/live-facts.json or contract/live-contract.json does not match the reference: run node scripts/contract-parity.mjs --refresh",
    );
    process.exit(1);
  }
}
const ours = factsOf(load(join(root, "openapi.yaml")));

/** Every difference, as `{ operation, detail }`; `operation` is "METHOD /path" with {} for parameters. */
const differences = [];
const differ = (operation, detail) => differences.push({ operation, detail });
for (const [key, op] of Object.entries(ours.operations)) {
  const theirs = live.operations[key];
  if (!theirs) {
    differ(key, op.sandboxOnly ? "sandbox-only, not in live" : "not in live");
    continue;
  }
  const liveLines = new Set(theirs.facts);
  const ourLines = new Set(op.facts);
  for (const line of op.facts) if (!liveLines.has(line)) differ(key, `ours: ${line}`);
  for (const line of theirs.facts) if (!ourLines.has(line)) differ(key, `live: ${line}`);
}
for (const key of Object.keys(live.operations)) {
  if (!ours.operations[key]) differ(key, "missing");
}
for (const type of live.webhookTypes) {
  if (!ours.webhookTypes.includes(type)) differ("webhooks", `missing event type ${type}`);
}
for (const type of ours.webhookTypes) {
  if (!live.webhookTypes.includes(type)) differ("webhooks", `event type ${type} not in live`);
}
if (ours.webhookSignatureHeader !== live.webhookSignatureHeader) {
  differ(
    "webhooks",
    `signature header ${ours.webhookSignatureHeader} (live ${live.webhookSignatureHeader})`,
  );
}

// Allow-list entries: { operation, detail?, pattern?, reason }. `operation`
// is written with real parameter names, or "*" for a rule of every
// operation; `detail`, when given, is a prefix of the difference, `pattern`
// a regular expression it must match.
const allowlist = load(ALLOWLIST) ?? [];
const allows = (entry, diff) =>
  (entry.operation === "*" || urlShape(entry.operation) === diff.operation) &&
  (entry.detail === undefined || diff.detail.startsWith(entry.detail)) &&
  (entry.pattern === undefined || new RegExp(entry.pattern).test(diff.detail));
const problems = [];
/** Whitespace-insensitive, so a quote may be wrapped in the YAML. */
const squeeze = (text) => text.replace(/\s+/g, " ").trim();
const grounds = Object.fromEntries(
  Object.entries(GROUNDS)
    .filter(([, file]) => existsSync(file))
    .map(([name, file]) => [name, squeeze(readFileSync(file, "utf8"))]),
);
for (const [i, entry] of allowlist.entries()) {
  const name = `allow-list entry ${i + 1} (${entry?.operation}${entry?.detail ? ` :: ${entry.detail}` : ""}${entry?.pattern ? ` :: /${entry.pattern}/` : ""})`;
  if (typeof entry?.operation !== "string" || typeof entry?.reason !== "string" || !entry.reason) {
    problems.push(`${name} needs an operation and a reason`);
  }
  // The line of the spec or FACTS.md the difference rests on, quoted; the
  // quote is checked wherever those documents are at hand.
  const quotes = Object.entries(entry?.rests_on ?? {});
  if (quotes.length === 0) {
    problems.push(`${name} rests on no line of the spec or FACTS.md (rests_on)`);
  }
  for (const [source, quote] of quotes) {
    if (!(source in GROUNDS)) {
      problems.push(`${name} rests on ${source}: only ${Object.keys(GROUNDS).join(" or ")} count`);
    } else if (typeof quote !== "string" || squeeze(quote).length < 12) {
      problems.push(`${name} quotes too little of ${source}`);
    } else if (grounds[source] !== undefined && !grounds[source].includes(squeeze(quote))) {
      problems.push(`${name} quotes what ${source} does not say: ${quote}`);
    }
  }
}
const used = new Set();
const unlisted = [];
for (const diff of differences) {
  const index = allowlist.findIndex((entry) => allows(entry, diff));
  if (index >= 0) used.add(index);
  else unlisted.push(diff);
  if (args.list)
    console.log(`${index >= 0 ? "allowed " : "UNLISTED"} ${diff.operation} :: ${diff.detail}`);
}
for (const [i, entry] of allowlist.entries()) {
  if (!used.has(i)) {
    problems.push(
      `allow-list entry no longer matches any difference (remove it): ${entry.operation}${entry.detail ? ` :: ${entry.detail}` : ""}${entry.pattern ? ` :: /${entry.pattern}/` : ""}`,
    );
  }
}

const liveCount = Object.keys(live.operations).length;
// Served as the contract says: at the live method and path, with no
// difference but those the rules of every operation allow (the seed's).
const rules = allowlist.filter((entry) => entry.operation === "*");
const served = Object.keys(live.operations).filter((key) => {
  if (!ours.operations[key]) return false;
  return differences.every((d) => d.operation !== key || rules.some((rule) => allows(rule, d)));
}).length;
console.log(
  `Contract parity: ${served} of ${liveCount} live operations served as the contract says; ` +
    `${differences.length} differences, ${differences.length - unlisted.length} allowed by ${allowlist.length} entries.`,
);
for (const diff of unlisted.slice(0, 200)) {
  console.error(`not allowed: ${diff.operation} :: ${diff.detail}`);
}
if (unlisted.length > 200) console.error(`... and ${unlisted.length - 200} more`);
for (const problem of problems) console.error(problem);
// exitCode, not exit(): a long listing must reach a pipe whole.
if (unlisted.length > 0 || problems.length > 0) process.exitCode = 1;
