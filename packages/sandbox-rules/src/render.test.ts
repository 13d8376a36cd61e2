import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import * as prettier from "prettier";
import { describe, expect, it } from "vitest";
import { checkRenderedDocs, GENERATED_HEADER, renderMagicValuesMarkdown } from "./render.js";
import { MAGIC_TABLES } from "./tables.js";

const DOCS_PATH = fileURLToPath(new URL("../../../docs/sandbox-magic-values.md", import.meta.url));
const markdown = renderMagicValuesMarkdown();

/** The Markdown table line of a row, whatever its padding. */
function tableLine(first: string, outcome: string): RegExp {
  const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`^\\| ${escape(first)} +\\| ${escape(outcome)} +\\|$`, "m");
}

describe("renderMagicValuesMarkdown", () => {
  it("starts with the generated-file header", () => {
    expect(markdown.split("\n")[0]).toBe(GENERATED_HEADER);
    expect(GENERATED_HEADER).toContain("packages/sandbox-rules");
    expect(GENERATED_HEADER).toContain("Do not edit by hand");
  });

  it.each(MAGIC_TABLES.map((t) => [t.id, t] as const))("renders every row of %s", (_id, table) => {
    expect(markdown).toContain(`\n## ${table.title}\n`);
    expect(markdown).toContain(table.description);
    expect(markdown).toContain(table.field);
    for (const row of table.rows)
      expect(markdown).toMatch(tableLine(`\`${row.match}\``, row.description));
    expect(markdown).toMatch(tableLine("any other", table.other.description));
    for (const note of table.notes ?? []) expect(markdown).toContain(`- ${note}`);
  });

  it("is already formatted as Prettier formats it, so `prettier --check .` passes", async () => {
    const config = (await prettier.resolveConfig(DOCS_PATH)) ?? {};
    expect(await prettier.format(markdown, { ...config, parser: "markdown" })).toBe(markdown);
  });

  it("matches docs/sandbox-magic-values.md", async () => {
    const existing = await readFile(DOCS_PATH, "utf8").catch(() => null);
    const check = checkRenderedDocs("docs/sandbox-magic-values.md", existing, markdown);
    expect(check.ok ? "" : check.message).toBe("");
  });
});

describe("checkRenderedDocs", () => {
  it("passes when the file equals the rendered output", () => {
    expect(checkRenderedDocs("x.md", "a\nb\n", "a\nb\n")).toEqual({ ok: true });
  });

  it("names a missing file and how to fix it", () => {
    const check = checkRenderedDocs("x.md", null, "a\n");
    expect(check).toEqual({ ok: false, message: expect.stringContaining("x.md does not exist") });
    expect(!check.ok && check.message).toContain("npm run render:docs");
  });

  it("names the first differing line", () => {
    const check = checkRenderedDocs("x.md", "a\nB\nc\n", "a\nb\nc\n");
    expect(!check.ok && check.message).toContain("first difference at line 2");
    const extra = checkRenderedDocs("x.md", "a\nb\n\n", "a\nb\n");
    expect(extra.ok).toBe(false);
  });
});
