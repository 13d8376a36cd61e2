import { readKey } from "./evaluate.js";
import { suffixOf } from "./suffix.js";
import { MAGIC_TABLES } from "./tables.js";
import type { KeyReader, MagicTable } from "./types.js";

/** First line of the rendered file: it is generated, so hand edits would be overwritten. */
export const GENERATED_HEADER =
  "<!-- Generated from packages/sandbox-rules by `npm run render:docs -w @payments-sandbox/sandbox-rules`. Do not edit by hand: `npm run check:docs -w @payments-sandbox/sandbox-rules` fails when it differs. -->";

/** Label of the first column, and how the key is described in the "Reads" line. */
function keyWording(key: KeyReader): { column: string; reads: (field: string) => string } {
  switch (key.kind) {
    case "suffix":
      return key.mode === "digits"
        ? { column: "Suffix", reads: (f) => `the last 3 digits of ${f}` }
        : { column: "Suffix", reads: (f) => `the last 3 characters of ${f}` };
    case "umaLocalPart":
      return { column: "Local part", reads: (f) => f };
    case "exact":
      return { column: "Value", reads: (f) => `${f}, compared exactly` };
  }
}

const code = (s: string): string => `\`${s}\``;

function readsLine(input: string, key: string | null): string {
  return key === null ? `${code(input)} has no suffix` : `${code(input)} reads ${code(key)}`;
}

// Cells are padded to the column width, as Prettier formats Markdown tables, so the generated file
// passes `prettier --check` unchanged.
function markdownTable(
  header: readonly [string, string],
  rows: readonly (readonly [string, string])[],
): string[] {
  const all = [header, ...rows].map((r) => r.map((c) => c.replace(/\|/g, "\\|")));
  const widths = [0, 1].map((i) => Math.max(3, ...all.map((r) => Array.from(r[i] ?? "").length)));
  const line = (cells: readonly string[]): string =>
    `| ${cells.map((c, i) => c + " ".repeat((widths[i] ?? 0) - Array.from(c).length)).join(" | ")} |`;
  const [head, ...body] = all;
  return [line(head ?? []), line(widths.map((w) => "-".repeat(w))), ...body.map(line)];
}

function renderTable(table: MagicTable<unknown>): string[] {
  const wording = keyWording(table.key);
  const examples = table.examples.map((e) => readsLine(e, readKey(table.key, e))).join("; ");
  return [
    `## ${table.title}`,
    "",
    table.description,
    "",
    `Applies to: ${table.appliesTo}.`,
    "",
    `Reads: ${wording.reads(table.field)}.`,
    "",
    `Examples: ${examples}.`,
    "",
    ...markdownTable(
      [wording.column, "Outcome"],
      [
        ...table.rows.map((r) => [code(r.match), r.description] as const),
        ["any other", table.other.description] as const,
      ],
    ),
    ...(table.notes && table.notes.length > 0 ? ["", ...table.notes.map((n) => `- ${n}`)] : []),
  ];
}

function renderReadingRules(): string[] {
  const digits = (s: string): string => readsLine(s, suffixOf(s, "digits"));
  const chars = (s: string): string => readsLine(s, suffixOf(s, "characters"));
  return [
    "## How values are read",
    "",
    `- **Last 3 digits** (external account identifiers, registration numbers): spaces and hyphens are ignored, so a formatted IBAN reads like an unformatted one (${digits("DE89 3704 0044 0532 0130 02")}). For an identifier with a domain part, such as an e-mail-like PIX key or a UMA address, the digits go at the end of the username and only the part before the last \`@\` is read (${digits("alice002@bank.example")}, ${digits("$user105@host.example")}). The 3 characters that end the value must all be digits, otherwise it has no suffix (${digits("ACC-12X")}).`,
    `- **Last 3 characters** (last names, card identifiers, merchant descriptors, internal account ids): the last 3 characters as given (${chars("Smith-001")}, ${chars("Lovelace")}).`,
    `- Leading and trailing whitespace is ignored. A missing value, a value with fewer than 3 characters to read (${digits("42")}), or a suffix that matches no row gets the table's "any other" row.`,
  ];
}

/** The Markdown page of every magic-value table, as written to docs/sandbox-magic-values.md. */
export function renderMagicValuesMarkdown(): string {
  const lines = [
    GENERATED_HEADER,
    "",
    "# Sandbox magic values",
    "",
    "In the sandbox, magic values in ordinary request fields choose the outcome of operations that would otherwise need real money, banks or card networks. This page is rendered from the same tables the sandbox server evaluates, so the two cannot disagree.",
    "",
    ...renderReadingRules(),
    ...MAGIC_TABLES.flatMap((t) => ["", ...renderTable(t)]),
  ];
  return `${lines.join("\n")}\n`;
}

export type DocsCheck = { readonly ok: true } | { readonly ok: false; readonly message: string };

/** Compares a docs file (`null` when missing) with the rendered output. */
export function checkRenderedDocs(
  path: string,
  existing: string | null,
  rendered: string,
): DocsCheck {
  const fix = "Run `npm run render:docs -w @payments-sandbox/sandbox-rules` to regenerate it.";
  if (existing === null) return { ok: false, message: `${path} does not exist. ${fix}` };
  if (existing === rendered) return { ok: true };
  const have = existing.split("\n");
  const want = rendered.split("\n");
  const line = want.findIndex((l, i) => have[i] !== l);
  const at = line === -1 ? have.length : line + 1;
  return {
    ok: false,
    message: `${path} differs from the magic-value tables of packages/sandbox-rules (first difference at line ${at}). ${fix}`,
  };
}
