import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openApiPath } from "../paths.js";
import { renderMagicValuesMarkdown } from "@payments-sandbox/sandbox-rules";
import { magicValuesDocument, withServer } from "./docs.js";

describe("withServer", () => {
  it("replaces the top-level servers and keeps the rest of the spec as written", () => {
    const spec = [
      "openapi: 3.1.0",
      "info:",
      "  title: T",
      "  description: |",
      "    servers: inside a block scalar is text",
      "servers:",
      "  - url: http://localhost:3000/v1",
      "    description: Local",
      "",
      "  - url: https://other.example/v1",
      "paths: {}",
      "",
    ].join("\n");
    expect(withServer(spec, "http://127.0.0.1:4321/v1")).toBe(
      [
        "openapi: 3.1.0",
        "info:",
        "  title: T",
        "  description: |",
        "    servers: inside a block scalar is text",
        "servers:",
        '  - url: "http://127.0.0.1:4321/v1"',
        "    description: This sandbox",
        "paths: {}",
        "",
      ].join("\n"),
    );
  });

  it("quotes the URL, so characters that mean something in YAML stay part of it", () => {
    const out = withServer("servers:\n  - url: x\n", 'https://h.example/a #b: "c"');
    expect(out).toBe(
      'servers:\n  - url: "https://h.example/a #b: \\"c\\""\n    description: This sandbox\n',
    );
  });

  it("adds servers to a spec that has none", () => {
    expect(withServer("openapi: 3.1.0", "http://h/v1")).toBe(
      'openapi: 3.1.0\nservers:\n  - url: "http://h/v1"\n    description: This sandbox\n',
    );
  });

  it("names only the given URL in the project's spec", () => {
    const out = withServer(readFileSync(openApiPath, "utf8"), "http://127.0.0.1:4321/2025-10-13");
    const servers = /^servers:\n(?:[ \t].*\n)*/m.exec(out)?.[0];
    expect(servers).toBe(
      'servers:\n  - url: "http://127.0.0.1:4321/2025-10-13"\n    description: This sandbox\n',
    );
  });
});

describe("magicValuesDocument", () => {
  it("carries every magic-value table the sandbox evaluates, without the generated-file header", () => {
    const document = magicValuesDocument();
    const description = (document.info as { description: string }).description;
    const markdown = renderMagicValuesMarkdown();
    const headings = markdown.match(/^## .*$/gm) ?? [];
    expect(headings.length).toBeGreaterThan(10);
    for (const heading of headings) expect(description).toContain(heading);
    expect(description).toContain("| `002`     | `kybStatus` `REJECTED`");
    expect(description).not.toContain("Do not edit by hand");
    expect(document.paths).toEqual({});
  });
});
